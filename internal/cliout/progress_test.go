package cliout

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// lineWriter signals each write.
type lineWriter struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes chan struct{}
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case l.writes <- struct{}{}:
	default:
	}
	return l.b.Write(p)
}

func (l *lineWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestProgressWritesThenErases(t *testing.T) {
	w := &lineWriter{writes: make(chan struct{}, 1)}
	stop := progress(w, "conformance", 0, time.Millisecond)
	<-w.writes // it wrote at least once
	stop()
	stop() // twice is fine
	got := w.String()
	if !strings.HasPrefix(got, "\r\x1b[Kconformance… ") || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("progress wrote %q", got)
	}
	n := len(w.String())
	if len(w.String()) != n {
		t.Error("progress wrote after stop returned")
	}
}

// Work that ends before the delay shows nothing, and nothing goes to what is not a terminal.
func TestProgressSilentWhenQuickOrNotATerminal(t *testing.T) {
	w := &lineWriter{writes: make(chan struct{}, 1)}
	stop := progress(w, "x", time.Hour, time.Millisecond)
	stop()
	if w.String() != "" {
		t.Errorf("quick work showed %q", w.String())
	}
	var b bytes.Buffer
	stop = Progress(&b, "x", 0, time.Millisecond)
	stop()
	if b.Len() != 0 || IsTerminal(&b) {
		t.Errorf("a buffer got %q", b.String())
	}
}

// TestDevNullIsNoTerminal: /dev/null is a character device, not a terminal: a command run with
// stdin from it (CI, cron, ssh host cmd </dev/null) asks nothing and draws no progress.
func TestDevNullIsNoTerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Errorf("%s is taken for a terminal", os.DevNull)
	}
}
