package local

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/autonomyhq/autonomy/internal/bounded"
)

// cappedOutput is the stdout of a session whose output the runner reads as one JSON value when
// it exits (the claude preset's result object, a workflow's envelope). The process writes to a
// pipe; a goroutine copies it into the file at path, at most max bytes. Past max, it stops
// reading and closes the pipe (the writer gets EPIPE), so neither the disk nor the runner's
// memory holds more than max bytes of it, and the session fails saying so (tooLarge).
type cappedOutput struct {
	path string
	max  int64

	mu   sync.Mutex
	n    int64 // bytes written to the file
	over bool  // the process wrote more than max
	err  error // writing the file failed

	r, w *os.File
	done chan struct{}
}

// captureOutput creates (truncates) the file at path and starts copying into it.
func captureOutput(path string, max int64) (*cappedOutput, error) {
	f, err := createNew(path, 0o600)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		f.Close()
		return nil, err
	}
	c := &cappedOutput{path: path, max: max, r: r, w: w, done: make(chan struct{})}
	go c.copy(f)
	return c, nil
}

func (c *cappedOutput) copy(f *os.File) {
	defer close(c.done)
	defer f.Close()
	buf := make([]byte, 32<<10)
	for {
		n, rerr := c.r.Read(buf)
		if n > 0 {
			c.mu.Lock()
			keep := int64(n)
			if room := c.max - c.n; keep > room {
				keep, c.over = room, true
			}
			if keep > 0 && c.err == nil {
				m, err := f.Write(buf[:keep])
				c.n += int64(m)
				c.err = err
			}
			over := c.over
			c.mu.Unlock()
			if over {
				c.r.Close() // the rest is not read: the writer gets EPIPE
				return
			}
		}
		if rerr != nil {
			return
		}
	}
}

// writer is the end the process writes to; the caller closes it once the process started.
func (c *cappedOutput) writer() *os.File { return c.w }

// drain waits, once the session's process group is gone, for the last of its output (at most
// logDrain: only a process that left the group can still hold the pipe).
func (c *cappedOutput) drain() {
	c.w.Close()
	select {
	case <-c.done:
	case <-time.After(logDrain):
	}
	c.r.Close()
	<-c.done
}

// problem says why the output cannot be read as the session's result: it exceeded the cap, or
// the file could not be written. nil when it is whole.
func (c *cappedOutput) problem() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over {
		return fmt.Errorf("its output on stdout exceeded %d bytes (policy.box.local.logMaxBytes), the most the runner reads as its result; it was cut there and not read", c.max)
	}
	if c.err != nil {
		return fmt.Errorf("cannot write its output to %s: %v", c.path, c.err)
	}
	return nil
}

// readCapped reads the file at path, refusing one larger than max bytes (a policy's
// logMaxBytes) without reading it.
func readCapped(path string, max int64) ([]byte, error) {
	data, err := bounded.ReadFile(path, max)
	if bounded.IsTooLarge(err) {
		return nil, fmt.Errorf("%v (policy.box.local.logMaxBytes), the most the runner reads as a result", err)
	}
	return data, err
}
