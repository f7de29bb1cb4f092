package cliout

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// ProgressAfter is how long work runs silently before Progress says it is still going.
const ProgressAfter = time.Second

// IsTerminal reports whether s, a command's stdin or stderr, is a terminal (one the system
// answers terminal requests on): where a progress line that rewrites itself is welcome, and
// where a question may be asked. A pipe, a file, a buffer or another character device
// (/dev/null: `cmd </dev/null` in CI, cron, ssh) is not.
func IsTerminal(s any) bool {
	f, ok := s.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Progress shows, on w, that work named label is still going once it has run longer than after:
// one line, "label… 3s", rewritten every tick, and erased by the returned stop, which waits until
// nothing more is written. Only on a terminal: elsewhere (CI logs, pipes) it writes nothing.
func Progress(w io.Writer, label string, after, tick time.Duration) (stop func()) {
	if !IsTerminal(w) {
		return func() {}
	}
	return progress(w, label, after, tick)
}

// progress is Progress on any writer.
func progress(w io.Writer, label string, after, tick time.Duration) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		timer := time.NewTimer(after)
		defer timer.Stop()
		select {
		case <-quit:
			return
		case <-timer.C:
		}
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			fmt.Fprintf(w, "\r\x1b[K%s… %s", label, time.Since(start).Round(time.Second))
			select {
			case <-quit:
				fmt.Fprint(w, "\r\x1b[K") // erase the line: the result follows on a clean one
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			wg.Wait()
		})
	}
}
