package egress

import (
	"io"
	"net"
	"sync"
)

// conns are the connections of the relays open, all closed at once when their owner stops.
type conns struct {
	mu     sync.Mutex
	open   map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// track records one relay's connections, or closes them when the owner has stopped.
func (cs *conns) track(c ...net.Conn) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		for _, x := range c {
			x.Close()
		}
		return false
	}
	if cs.open == nil {
		cs.open = map[net.Conn]struct{}{}
	}
	for _, x := range c {
		cs.open[x] = struct{}{}
	}
	cs.wg.Add(1)
	return true
}

// untrack closes and forgets a relay's connections once it is over.
func (cs *conns) untrack(c ...net.Conn) {
	cs.mu.Lock()
	for _, x := range c {
		x.Close()
		delete(cs.open, x)
	}
	cs.mu.Unlock()
	cs.wg.Done()
}

// closeAll ends every relay, refuses new ones, and waits until all are over.
func (cs *conns) closeAll() {
	cs.mu.Lock()
	cs.closed = true
	for x := range cs.open {
		x.Close()
	}
	cs.mu.Unlock()
	cs.wg.Wait()
}

// relay copies from (what a sends, read through from) to b, and b to a, until both ends are done.
func relay(a net.Conn, from io.Reader, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst net.Conn, src io.Reader) {
		_, _ = io.Copy(dst, src)
		closeWrite(dst)
		done <- struct{}{}
	}
	go cp(b, from)
	go cp(a, b)
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}
