package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
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
// called, which adopts once more and waits for the loop to end. A pass the store fails is tried
// again at the next; the last one's failure is written to log (the parent's log): the sessions
// it could not start fail as never started, after startGrace, and the log says why.
func (r *Runner) adoptWhile(ctx context.Context, parent string, log io.Writer) func() {
	var last error // the last pass's; every's final call runs in the caller's goroutine
	stop := r.every(context.WithoutCancel(ctx), adoptEvery, func() { last = r.adoptLaunched(ctx, parent) })
	return func() {
		stop()
		if last != nil {
			fmt.Fprintf(log, "autonomy: cannot start the sessions it launched: %v; they fail as never started after %s\n", last, startGrace)
		}
	}
}

// adoptLaunched starts a supervisor for each session parent launched that has none yet,
// claiming it first in one transaction so that no two processes start it. It returns the first
// error of the store; a start that fails ends its session failed (start).
func (r *Runner) adoptLaunched(ctx context.Context, parent string) error {
	ss, err := r.Store.List(ctx, store.ListOptions{})
	if err != nil {
		return err
	}
	self := os.Getpid()
	start, _ := proc.StartTime(self)
	var first error
	for _, s := range ss {
		if s.Origin != "session:"+parent || s.Kind != "agent" || s.Status != ir.Running || s.SupervisorPID != 0 || s.PID != 0 {
			continue
		}
		n, ok, err := r.Store.Modify(ctx, s.ID, []ir.SessionStatus{ir.Running}, func(m *store.Session) {
			if m.SupervisorPID == 0 {
				m.SupervisorPID, m.SupervisorStart = self, start
			}
		})
		if err != nil && first == nil {
			first = err
		}
		if err != nil || !ok || n.SupervisorPID != self {
			continue
		}
		_ = r.Store.Log(ctx, store.Event{Session: n.ID, Actor: n.Actor, Kind: "adopted", Message: fmt.Sprintf("started by the supervisor of session %s, in the runner's environment", parent)})
		_ = r.start(ctx, n)
	}
	return first
}

// startedSupervisors are the supervisor processes this process started (start), by pid, with
// their start times. otherSupervisor spares them without asking the store: a store that fails to
// answer must not get a supervisor this one started, an adopted session's, killed as an escaped
// process of its own session.
type startedSupervisors struct {
	mu sync.Mutex
	m  map[int]uint64
}

// add records the supervisor pid started at start, forgetting those that have exited.
func (ss *startedSupervisors) add(pid int, start uint64) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.m == nil {
		ss.m = map[int]uint64{}
	}
	for p, st := range ss.m {
		if now, err := proc.StartTime(p); err != nil || now != st {
			delete(ss.m, p)
		}
	}
	ss.m[pid] = start
}

// has says whether pid, started at start, is a supervisor this process started.
func (ss *startedSupervisors) has(pid int, start uint64) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	st, ok := ss.m[pid]
	return ok && st == start
}
