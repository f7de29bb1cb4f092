package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
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
// next session would lock the new one), but not the directory it works in. The flock dies with
// its supervisor, the agent may not: whoever takes the lock next checks that no root agent whose
// supervisor died still works there (rootOrphan), and waits for it if one does.

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
	queued, waitedFor := false, ""
	for {
		free, held, err := tryLock(r.In.Dir, exclusive)
		if err != nil {
			r.finish(ctx, s.ID, ir.Failed, fmt.Sprintf("cannot take the root workspace lock: %v", err), "", nil)
			return nil, false
		}
		var orphan store.Session
		if held {
			if o, found := r.rootOrphan(ctx, s.ID); found {
				free() // its agent still works in the root: the lock is the dead supervisor's still
				held, orphan = false, o
			}
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
		// Whom it waits for is read again at each poll: the holder names itself only once it
		// holds the lock, so a session queued in between first sees "another session".
		by := "another session"
		if orphan.ID != "" {
			by = fmt.Sprintf("session %s (its supervisor died, and its agent, process group %d, still works there)", orphan.ID, orphan.PID)
		} else if b, err := os.ReadFile(holder); err == nil && strings.TrimSpace(string(b)) != "" && strings.TrimSpace(string(b)) != s.ID {
			by = "session " + strings.TrimSpace(string(b))
		}
		if !queued || by != waitedFor {
			queued, waitedFor = true, by
			msg := fmt.Sprintf("%swaiting for %s to leave the installation root: one agent at a time works there, and other sessions start when none does (give the actor workspace: isolated to run it alongside)", queuedPrefix, by)
			fmt.Fprintf(logf, "autonomy: %s\n", msg)
			_, _, _ = r.Store.Modify(ctx, s.ID, []ir.SessionStatus{ir.Running, ir.Paused}, func(m *store.Session) { m.Reason = msg })
			_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "queued", Message: msg})
		}
		time.Sleep(rootPoll)
		if r.supervisor.cancelled(ctx, s.ID) {
			fmt.Fprintf(logf, "autonomy: cancelled while queued: the agent was not started\n")
			return nil, false
		}
	}
}

// rootOrphan finds a session other than self whose agent may still work in the installation
// root with its supervisor dead: the flock died with that supervisor, but the agent's process
// group lives on, unsupervised, and may still change the installation. Until that group is gone
// the root is not free, so the lock counts as held by it.
//
// Waiting for the group, rather than killing it here, keeps the contract of a dead supervisor
// (its session runs on, tracked, stopped only at its timeout by whoever reconciles; a cancel stops
// it): the session that waits must not decide for the operator that another one's work is lost.
// A session counts when it is in flight, or ended with a stop under way, ran in the installation
// root (not a worktree), is a skill's (an agent's; one whose config cannot be read counts too),
// and its recorded group still holds a process started for it. A script or command orphaned in
// the root does not count: it never held the root exclusively.
func (r *Runner) rootOrphan(ctx context.Context, self string) (store.Session, bool) {
	inFlight, err := r.Store.List(ctx, store.ListOptions{})
	if err != nil {
		return store.Session{}, false
	}
	stopping, _ := r.Store.Stopping(ctx)
	for _, o := range append(inFlight, stopping...) {
		if o.ID == self || o.Kind != "agent" || o.PID <= 0 || o.Worktree || o.Workdir != r.In.Dir {
			continue
		}
		if cfg, err := r.In.ReloadActor(o.Actor); err == nil && !cfg.Skill {
			continue
		}
		if !r.supervisor.alive(o) && sessionGroup(o) {
			return o, true
		}
	}
	return store.Session{}, false
}
