package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// SessionView is a session as the CLI prints it in JSON: the Runner contract's fields first,
// then what the local runner records. The token hash is never shown.
type SessionView struct {
	ID         string           `json:"id"`
	Agent      string           `json:"agent"`
	Status     ir.SessionStatus `json:"status"`
	Ref        string           `json:"ref,omitempty"`
	Params     ir.LaunchParams  `json:"params"`
	Kind       string           `json:"kind"`
	Trigger    string           `json:"trigger,omitempty"`
	Origin     string           `json:"origin,omitempty"`
	Branch     string           `json:"branch,omitempty"`
	Workdir    string           `json:"workdir,omitempty"`
	PID        int              `json:"pid,omitempty"`
	Created    string           `json:"created"`
	Started    string           `json:"started,omitempty"`
	Ended      string           `json:"ended,omitempty"`
	ExitCode   *int             `json:"exitCode,omitempty"`
	Reason     string           `json:"reason,omitempty"`
	Verified   string           `json:"verified,omitempty"`
	Evidence   string           `json:"evidence,omitempty"`
	ResolvedBy string           `json:"resolvedBy,omitempty"`
	Log        string           `json:"log,omitempty"`
	// WaitingFor is runner list's WAITING FOR, whole (Runner.Awaited); list fills it.
	WaitingFor string `json:"waitingFor,omitempty"`
}

// View is the printable form of a session.
func View(s store.Session) SessionView {
	params := s.Params
	if params == nil {
		params = ir.LaunchParams{}
	}
	return SessionView{ID: s.ID, Agent: s.Actor, Status: s.Status, Ref: s.Ref, Params: params, Kind: s.Kind,
		Trigger: s.Trigger, Origin: s.Origin, Branch: s.Branch, Workdir: s.Workdir, PID: s.PID,
		Created: stamp(s.CreatedAt), Started: stamp(s.StartedAt), Ended: stamp(s.EndedAt), ExitCode: s.ExitCode,
		Reason: s.Reason, Verified: s.Verified, Evidence: s.Evidence, ResolvedBy: s.ResolvedBy, Log: s.LogPath}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// FollowLogs copies a session's log to w; with follow, it keeps copying until the session ends
// (or ctx does) and the log is drained. When the log dropped earlier output to stay within
// policy.box.local.logMaxBytes, the first line says how many bytes; a follower slower than the
// session is told the same of what was dropped before it could read it.
//
// An ask to a person has no output: its log is its audit events, one a line as runner get
// shows them, and with follow, those to come until it is resolved, retracted or expired.
func (r *Runner) FollowLogs(ctx context.Context, id string, follow bool, w io.Writer) error {
	s, path, err := r.logsOf(ctx, id)
	if err != nil {
		return err
	}
	if s.Kind == "human" {
		return r.followAsk(ctx, s, follow, w)
	}
	var seg segments
	for {
		if seg, err = openSegments(path); err != nil {
			return err
		}
		if seg.cur != nil {
			break
		}
		if !follow || s.Status.Ended() {
			return nil // it never wrote a line
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return nil
		}
		if s, _, err = r.Store.Get(ctx, id); err != nil {
			return err
		}
	}
	f := seg.cur
	defer func() { f.Close() }()
	if seg.dropped > 0 {
		fmt.Fprintf(w, "autonomy: %d bytes of earlier output were dropped: the log keeps the last %d bytes (policy.box.local.logMaxBytes)\n", seg.dropped, r.In.logMax())
	}
	// Offsets in the whole output: base is that of the first byte printed, and out counts the
	// bytes printed since, so base+out.n is how far the output was followed.
	out := &countWriter{w: w}
	base, err := seg.catchUp(out, seg.dropped, nil)
	if err != nil {
		return err
	}
	for {
		if _, err := io.Copy(out, f); err != nil {
			return fmt.Errorf("reading %s: %v", path, err)
		}
		if !follow {
			return nil
		}
		if fi, err1 := f.Stat(); err1 == nil {
			if pi, err2 := os.Stat(path); err2 == nil && !os.SameFile(fi, pi) {
				// Rotated: nothing writes to f any more; finish it, then go on from the segments
				// as they are now.
				if _, err := io.Copy(out, f); err != nil {
					return fmt.Errorf("reading %s: %v", path, err)
				}
				if seg, err = openSegments(path); err != nil {
					return err
				}
				if seg.cur != nil {
					if base, err = seg.catchUp(out, base, fi); err != nil {
						return err
					}
					f.Close()
					f = seg.cur
					continue
				}
			}
		}
		if s.Status.Ended() {
			_, err := io.Copy(out, f) // what was written before it ended
			return err
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return nil
		}
		n, _, err := r.Store.Get(ctx, id)
		if err != nil {
			return err
		}
		if n, err = r.reconcile(ctx, n); err != nil && !isUnrecorded(err) {
			return err
		}
		s = n
	}
}

// segments is one consistent view of a log: how many bytes it dropped, its older segment (nil
// when none) and its current one (nil when the log does not exist yet).
type segments struct {
	dropped    int64
	older, cur *os.File
}

// openSegments opens a log's segments as they are at one moment: it opens them again when the
// log rotated while they were being opened (its rotation count was odd, or changed).
func openSegments(path string) (segments, error) {
	for attempt := 0; ; attempt++ {
		var seg segments
		st, err := readLogState(path)
		if err != nil {
			return seg, err
		}
		seg.dropped = st.dropped
		older, errO := os.Open(path + ".1")
		if errO != nil && !os.IsNotExist(errO) {
			return seg, errO
		}
		cur, errC := os.Open(path)
		if errC != nil && !os.IsNotExist(errC) {
			closeAll(older)
			return seg, errC
		}
		seg.older, seg.cur = fileOrNil(older, errO), fileOrNil(cur, errC)
		again, _ := readLogState(path)
		if st.gen%2 == 0 && again == st && sameAsPath(seg.cur, path) && sameAsPath(seg.older, path+".1") || attempt == 100 {
			return seg, nil
		}
		closeAll(seg.older, seg.cur)
		time.Sleep(time.Millisecond)
	}
}

// catchUp prints what of the older segment a follower has not seen, given that it printed the
// output up to base+out.n and that the segment it read last is done (info, nil at the start).
// When whole segments were dropped before it could read them, it says how many bytes first. It
// closes the older segment and returns the new base.
func (seg segments) catchUp(out *countWriter, base int64, done os.FileInfo) (int64, error) {
	if seg.older == nil {
		return base, nil
	}
	defer seg.older.Close()
	oi, err := seg.older.Stat()
	if err != nil {
		return base, err
	}
	if done != nil && os.SameFile(oi, done) {
		return base, nil // the segment just followed
	}
	seen := base + out.n
	if seg.dropped > seen {
		if out.n > 0 && out.last != '\n' {
			fmt.Fprintln(out.w)
		}
		fmt.Fprintf(out.w, "autonomy: %d bytes of output were dropped while following (the session wrote faster than they were read)\n", seg.dropped-seen)
		base, seen = base+seg.dropped-seen, seg.dropped
	}
	if skip := seen - seg.dropped; skip > 0 {
		if skip >= oi.Size() {
			return base, nil
		}
		if _, err := seg.older.Seek(skip, io.SeekStart); err != nil {
			return base, err
		}
	}
	_, err = io.Copy(out, seg.older)
	return base, err
}

func fileOrNil(f *os.File, err error) *os.File {
	if err != nil {
		return nil
	}
	return f
}

// sameAsPath says whether f is still the file at path (both absent counts as the same).
func sameAsPath(f *os.File, path string) bool {
	pi, err := os.Stat(path)
	if f == nil {
		return os.IsNotExist(err)
	}
	fi, err2 := f.Stat()
	return err == nil && err2 == nil && os.SameFile(fi, pi)
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// countWriter counts what it writes, and remembers the last byte.
type countWriter struct {
	w    io.Writer
	n    int64
	last byte
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if n > 0 {
		c.last = p[n-1]
	}
	return n, err
}

// askEventsRead is how many events followAsk reads at a time.
const askEventsRead = 256

// followAsk prints the events of the ask s (FollowLogs).
func (r *Runner) followAsk(ctx context.Context, s store.Session, follow bool, w io.Writer) error {
	fmt.Fprintf(w, "autonomy: session %s is an ask to a person (%s): it has no output; its events follow\n", s.ID, s.Status)
	var seq int64
	for {
		// Read after s was: once s has ended, what this reads is every event up to its end.
		es, err := r.Store.EventsAfter(ctx, s.ID, seq, askEventsRead)
		if err != nil {
			return err
		}
		for _, e := range es {
			fmt.Fprintf(w, "%s  %s  %s\n", e.At.UTC().Format(time.RFC3339Nano), cliout.TerminalSafe(e.Kind), cliout.TerminalSafe(e.Message))
			seq = e.Seq
		}
		if len(es) == askEventsRead {
			continue
		}
		if !follow || s.Status.Ended() {
			return nil
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return nil
		}
		n, ok, err := r.Store.Get(ctx, s.ID)
		if err != nil {
			return err
		}
		if !ok {
			return nil // gone from the store: nothing more to follow
		}
		s = n
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
