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
// (or ctx does) and the log is drained.
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
	defer f.Close()
	for {
		if _, err := io.Copy(w, f); err != nil {
			return fmt.Errorf("reading %s: %v", path, err)
		}
		if !follow {
			return nil
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
