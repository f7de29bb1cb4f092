package local

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultLogMaxBytes is the default of policy.box.local.logMaxBytes: what a session's log keeps
// of its output, the most recent part.
const DefaultLogMaxBytes = 10 << 20

// The bounds of policy.box.local.logMaxBytes.
const (
	minLogMaxBytes = 1 << 10
	maxLogMaxBytes = 1 << 40
)

// logDrain bounds how long a supervisor keeps reading a session's output once its process group
// is gone: only a process that left the group can still hold the pipe, and it is not waited for.
const logDrain = time.Second

// cappedLog is a session's log, written by its supervisor only, from a pipe the session's
// processes write to: it keeps the most recent output, at most max bytes on disk, in two files:
// PATH (the current segment, up to max/2 bytes) and PATH.1 (the segment before it). When the
// current segment is full it becomes PATH.1 and the former PATH.1 is dropped, its size added to
// PATH.dropped, so that `runner logs` can say how much earlier output is gone. Nothing is
// copied: the tail is whole, and rotating costs two renames.
type cappedLog struct {
	mu      sync.Mutex
	path    string
	segment int64 // max/2
	f       *os.File
	size    int64 // of the current segment
	dropped int64
	// gen counts rotations begun and finished: odd while one is under way, so that a reader that
	// saw the same even gen before and after opening the segments knows they are one moment's.
	gen int64
}

// openCappedLog opens the log at path for appending, keeping at most max bytes of it; a log
// already there (a supervisor started again) is continued.
func openCappedLog(path string, max int64) (*cappedLog, error) {
	if max < minLogMaxBytes {
		max = minLogMaxBytes
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|oNoFollow, 0o600) // never through a link (statefile.go)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	st, _ := readLogState(path)
	return &cappedLog{path: path, segment: max / 2, f: f, size: fi.Size(), dropped: st.dropped, gen: st.gen + st.gen%2}, nil
}

// Write appends p, rotating the segments as they fill.
func (l *cappedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	written := 0
	for len(p) > 0 {
		if l.size >= l.segment {
			if err := l.rotate(); err != nil {
				return written, err
			}
		}
		n := int(min(int64(len(p)), l.segment-l.size))
		m, err := l.f.Write(p[:n])
		written, l.size, p = written+m, l.size+int64(m), p[m:]
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// rotate makes the current segment PATH.1, dropping the one before, and starts a new segment.
func (l *cappedLog) rotate() error {
	l.gen++
	if err := writeLogState(l.path, logState{gen: l.gen, dropped: l.dropped}); err != nil {
		return err
	}
	old := l.path + ".1"
	if fi, err := os.Stat(old); err == nil {
		l.dropped += fi.Size()
	}
	if err := os.Rename(l.path, old); err != nil {
		return err
	}
	f, err := createNew(l.path, 0o600)
	if err != nil {
		return err
	}
	l.f.Close()
	l.f, l.size = f, 0
	l.gen++
	return writeLogState(l.path, logState{gen: l.gen, dropped: l.dropped})
}

// Close closes the current segment.
func (l *cappedLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// pipeTo gives a process a pipe to write its output to, copied into the log by a goroutine; the
// caller sets cmd's Stdout and Stderr to w, closes w once the process started, and calls drain
// once its process group is gone.
func (l *cappedLog) pipeTo() (w *os.File, drain func(), err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Read only: *os.File's WriteTo would allocate a 32 KiB buffer per session.
		_, _ = io.CopyBuffer(l, struct{ io.Reader }{r}, make([]byte, 8<<10))
	}()
	drain = func() {
		w.Close() // in case the process never started
		select {
		case <-done:
		case <-time.After(logDrain):
		}
		r.Close()
		<-done
	}
	return w, drain, nil
}

// droppedPath holds a log's state: its rotation count and how many bytes of output it dropped.
func droppedPath(path string) string { return path + ".dropped" }

// logState is what droppedPath holds.
type logState struct{ gen, dropped int64 }

func writeLogState(path string, st logState) error {
	tmp := droppedPath(path) + ".tmp"
	if err := writeNew(tmp, []byte(fmt.Sprintf("%d %d\n", st.gen, st.dropped)), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, droppedPath(path))
}

// readLogState reads a log's state (zero when it never rotated).
func readLogState(path string) (logState, error) {
	b, err := os.ReadFile(droppedPath(path))
	if errors.Is(err, os.ErrNotExist) {
		return logState{}, nil
	}
	if err != nil {
		return logState{}, err
	}
	var st logState
	f := strings.Fields(string(b))
	if len(f) == 2 {
		st.gen, err = strconv.ParseInt(f[0], 10, 64)
		if err == nil {
			st.dropped, err = strconv.ParseInt(f[1], 10, 64)
		}
	}
	if len(f) != 2 || err != nil || st.gen < 0 || st.dropped < 0 {
		return logState{}, fmt.Errorf("%s: %q is not a rotation count and a byte count", droppedPath(path), b)
	}
	return st, nil
}

// readDropped is how many bytes of output the log at path has dropped (0 when none).
func readDropped(path string) (int64, error) {
	st, err := readLogState(path)
	return st.dropped, err
}
