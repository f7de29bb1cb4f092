package local

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// A session's launch (autonomy runner launch from inside a session) records the new session and
// starts no supervisor itself: a supervisor it started would run inside the calling agent's
// sandbox, and die with it, and in the calling session's environment (its allowlist, a preset's
// placeholder key and the URL of its own model proxy), where the new agent could reach neither
// the model nor what the operator passes. The calling session's own supervisor, which runs
// outside the sandbox in the environment the operator started the runner with, starts it
// instead (adopts it): it looks for the sessions its session launched every adoptEvery while
// the agent runs, and once more when it has ended. A session left unadopted (its caller's
// supervisor died) is reconciled as every session whose supervisor never started: failed,
// "its runner died before starting it", after startGrace.

// adoptEvery is how often a supervisor looks for the sessions its session launched.
const adoptEvery = 200 * time.Millisecond

// leavesToCaller says whether a launch from this runner leaves the new session for the calling
// session's supervisor to start: a detached runner called from inside a session that a
// supervisor process watches.
func (r *Runner) leavesToCaller() bool {
	return r.opts.Detach && r.caller != nil && r.caller.session.SupervisorPID > 0
}

// adoptWhile adopts the sessions session parent launches until the returned function is
// called, which adopts once more and waits for the loop to end.
func (r *Runner) adoptWhile(ctx context.Context, parent string) func() {
	return r.every(context.WithoutCancel(ctx), adoptEvery, func() { r.adoptLaunched(ctx, parent) })
}

// adoptLaunched starts a supervisor for each session parent launched that has none yet,
// claiming it first in one transaction so that no two processes start it.
func (r *Runner) adoptLaunched(ctx context.Context, parent string) {
	ss, err := r.Store.List(ctx, store.ListOptions{})
	if err != nil {
		return
	}
	self := os.Getpid()
	start, _ := proc.StartTime(self)
	for _, s := range ss {
		if s.Origin != "session:"+parent || s.Kind != "agent" || s.Status != ir.Running || s.SupervisorPID != 0 || s.PID != 0 {
			continue
		}
		n, ok, err := r.Store.Modify(ctx, s.ID, []ir.SessionStatus{ir.Running}, func(m *store.Session) {
			if m.SupervisorPID == 0 {
				m.SupervisorPID, m.SupervisorStart = self, start
			}
		})
		if err != nil || !ok || n.SupervisorPID != self {
			continue
		}
		_ = r.Store.Log(ctx, store.Event{Session: n.ID, Actor: n.Actor, Kind: "adopted", Message: fmt.Sprintf("started by the supervisor of session %s, in the runner's environment", parent)})
		_ = r.start(ctx, n)
	}
}
