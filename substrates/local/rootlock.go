package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local/store"
)

// holderPath names the session that holds the installation root exclusively, for the message
// of the ones that wait (informative only).
const holderPath = StateDir + "/root-workspace.holder"

// The root lock lets one agent at a time work in the installation root (a skill session whose
// workspace is the root), and no other session start meanwhile. Its tamper guard (guard.go)
// compares what autonomy installed before and after the session: two agents in the root at once
// would see each other's changes and blame the wrong one, and a session starting meanwhile would
// read what the agent rewrote before it is put back. So the others wait, queued, until it has
// ended and its changes were put back. Nothing is refused and nothing is lost; actors given
// workspace: isolated run side by side.
//
// The lock is an flock(2) on the installation directory itself, not on a file in it: an agent
// working there can delete or replace any file of the installation (a lock file too, and the
// next session would lock the new one), but not the directory it works in.

// queuedPrefix starts the reason of a session waiting for the root workspace.
const queuedPrefix = "queued: "

// rootPoll is how often a queued session tries the lock again and looks for its cancel.
const rootPoll = 50 * time.Millisecond

// Queued reports whether a session waits for the root workspace (runner list shows it queued).
func Queued(s store.Session) bool {
	return s.Kind == "agent" && s.PID == 0 && !s.Status.Ended() && strings.HasPrefix(s.Reason, queuedPrefix)
}

// ListStatus is the status runner list shows: queued for a session waiting for the root
// workspace, its status otherwise.
func ListStatus(s store.Session) string {
	if Queued(s) {
		return "queued"
	}
	return string(s.Status)
}

// rootHold is a hold of the root workspace lock: exclusive for an agent working in the
// installation root, for its whole session; shared for any other session while it reads what
// autonomy installed and starts. release is idempotent.
type rootHold struct {
	exclusive bool
	free      func()
}

func (h *rootHold) release() {
	if h != nil && h.free != nil {
		h.free()
		h.free = nil
	}
}

// lockRoot takes the root workspace lock for session s, exclusive or shared, waiting (queued: the
// session's reason says for whom, and list shows it) while another session holds it against
// this one. ok is false when the session was cancelled while it waited, or when the lock could not
// be taken (the session is then failed). The lock is an flock(2): the kernel drops it when its
// holder exits, however it exits.
func (r *Runner) lockRoot(ctx context.Context, s store.Session, logf io.Writer, exclusive bool) (hold *rootHold, ok bool) {
	holder := r.In.Path(holderPath)
	queued := false
	for {
		free, held, err := tryLock(r.In.Dir, exclusive)
		if err != nil {
			r.finish(ctx, s.ID, ir.Failed, fmt.Sprintf("cannot take the root workspace lock: %v", err), "", nil)
			return nil, false
		}
		if held {
			if exclusive {
				_ = writeNew(holder, []byte(s.ID+"\n"), 0o600)
			}
			if queued {
				_, _, _ = r.Store.Modify(ctx, s.ID, []ir.SessionStatus{ir.Running, ir.Paused}, func(m *store.Session) {
					if strings.HasPrefix(m.Reason, queuedPrefix) {
						m.Reason = ""
					}
				})
				_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "dequeued", Message: "the installation root is free: starting"})
			}
			return &rootHold{exclusive: exclusive, free: free}, true
		}
		if !queued {
			queued = true
			by := "another session"
			if b, err := os.ReadFile(holder); err == nil && strings.TrimSpace(string(b)) != "" {
				by = "session " + strings.TrimSpace(string(b))
			}
			msg := fmt.Sprintf("%swaiting for %s to leave the installation root: one agent at a time works there, and other sessions start when none does (give the actor workspace: isolated to run it alongside)", queuedPrefix, by)
			fmt.Fprintf(logf, "autonomy: %s\n", msg)
			_, _, _ = r.Store.Modify(ctx, s.ID, []ir.SessionStatus{ir.Running, ir.Paused}, func(m *store.Session) { m.Reason = msg })
			_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "queued", Message: msg})
		}
		time.Sleep(rootPoll)
		if r.cancelled(ctx, s.ID) {
			fmt.Fprintf(logf, "autonomy: cancelled while queued: the agent was not started\n")
			return nil, false
		}
	}
}
