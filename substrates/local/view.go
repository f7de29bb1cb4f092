package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local/store"
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
// policy.box.local.logMaxBytes, the first line says how many bytes.
func (r *Runner) FollowLogs(ctx context.Context, id string, follow bool, w io.Writer) error {
	s, path, err := r.Logs(ctx, id)
	if err != nil {
		return err
	}
	var f *os.File
	for f == nil {
		f, err = os.Open(path)
		if err == nil {
			break
		}
		if !os.IsNotExist(err) {
			return err
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
	defer func() { f.Close() }()
	// The current segment is open; the one before it is printed first, unless it rotated into
	// that place meanwhile (then it is the file already open).
	if dropped, err := readDropped(path); err != nil {
		return err
	} else if dropped > 0 {
		fmt.Fprintf(w, "autonomy: %d bytes of earlier output were dropped: the log keeps the last %d bytes (policy.box.local.logMaxBytes)\n", dropped, r.logMax())
	}
	if err := copyOlder(w, f, path+".1"); err != nil {
		return err
	}
	for {
		if _, err := io.Copy(w, f); err != nil {
			return fmt.Errorf("reading %s: %v", path, err)
		}
		if !follow {
			return nil
		}
		if next, err := rotated(f, path); err != nil {
			return err
		} else if next != nil {
			if _, err := io.Copy(w, f); err != nil { // what was written before it rotated
				return fmt.Errorf("reading %s: %v", path, err)
			}
			f.Close()
			f = next
			continue
		}
		if s.Status.Ended() {
			_, err := io.Copy(w, f) // what was written before it ended
			return err
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return nil
		}
		n, _, err := r.Store.Get(ctx, id)
		if err != nil {
			return err
		}
		if n, err = r.reconcile(ctx, n); err != nil {
			return err
		}
		s = n
	}
}

// copyOlder copies the log's previous segment, unless it is cur itself.
func copyOlder(w io.Writer, cur *os.File, older string) error {
	o, err := os.Open(older)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer o.Close()
	oi, err1 := o.Stat()
	ci, err2 := cur.Stat()
	if err1 == nil && err2 == nil && os.SameFile(oi, ci) {
		return nil
	}
	if _, err := io.Copy(w, o); err != nil {
		return fmt.Errorf("reading %s: %v", older, err)
	}
	return nil
}

// rotated opens the log's current segment when it is no longer the file f (nil otherwise).
func rotated(f *os.File, path string) (*os.File, error) {
	fi, err1 := f.Stat()
	pi, err2 := os.Stat(path)
	if err1 != nil || err2 != nil || os.SameFile(fi, pi) {
		return nil, nil
	}
	next, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	return next, err
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
