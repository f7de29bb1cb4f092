package local

import (
	"context"
	"sync"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// watchEvery is how often a supervising process reads which stops are under way, to act on a
// cancel that another process recorded: the KILL that follows the grace period is the
// supervisor's, so that a cancel returns at once and the group goes whatever becomes of the
// process that cancelled it.
const watchEvery = 200 * time.Millisecond

// stopWatch tells the sessions this process supervises of the stops any process records: the
// poller reads which stops are under way while one is registered.
type stopWatch struct {
	// stopping reads the sessions whose stop is under way (Store.Stopping).
	stopping func(context.Context) ([]store.Session, error)

	mu sync.Mutex
	// waiting holds, for each session registered, where poll tells of its stop; polling says
	// whether poll runs.
	waiting map[string]chan time.Time
	polling bool
}

// await registers a supervised session for the stop poller: the channel receives the session's
// StopBy once a stop of it is recorded. forget unregisters it.
func (w *stopWatch) await(id string) (stop <-chan time.Time, forget func()) {
	ch := make(chan time.Time, 1)
	w.mu.Lock()
	if w.waiting == nil {
		w.waiting = map[string]chan time.Time{}
	}
	w.waiting[id] = ch
	if !w.polling {
		w.polling = true
		go w.poll()
	}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.waiting, id)
		w.mu.Unlock()
	}
}

// poll reads, every watchEvery while this process supervises sessions, which stops are under
// way, and tells the supervisors concerned: one query of a few rows per process, however many
// sessions it supervises. It ends when none is left to tell.
func (w *stopWatch) poll() {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for range t.C {
		w.mu.Lock()
		if len(w.waiting) == 0 {
			w.polling = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		ss, err := w.stopping(context.Background())
		if err != nil {
			continue // the store is closing, or busy: the next round tells
		}
		w.mu.Lock()
		for _, s := range ss {
			if ch, ok := w.waiting[s.ID]; ok {
				select {
				case ch <- s.StopBy:
				default:
				}
			}
		}
		w.mu.Unlock()
	}
}

// sessionGroup reports whether the process group the session records is the session's: one of
// its processes was started with the session's AUTONOMY_SESSION (Linux; elsewhere any live group
// counts). The database is writable by an agent working in the installation root: a pid it wrote
// there, of a process group of yours, is not signalled by a cancel, a pause or a reconciliation.
func sessionGroup(s store.Session) bool {
	return s.PID > 1 && proc.GroupHasEnv(s.PID, SessionEnv+"="+s.ID)
}

// stopDone records that no stop of the session is under way any more, once its group is gone.
func (r *Runner) stopDone(ctx context.Context, id string) {
	if s, ok, err := r.Store.Get(ctx, id); err == nil && ok && !s.StopBy.IsZero() {
		_, _, _ = r.Store.Modify(ctx, id, nil, func(m *store.Session) { m.StopBy = time.Time{} })
	}
}

// finishStop completes a stop under way whose supervisor died: once its grace period is over,
// KILL to whatever is left of the group; once the group is gone, the stop is over.
func (r *Runner) finishStop(ctx context.Context, s store.Session) (store.Session, error) {
	if s.StopBy.IsZero() || s.PID <= 0 {
		return s, nil
	}
	if len(proc.Members(s.PID)) > 0 && sessionGroup(s) {
		if time.Now().Before(s.StopBy) {
			return s, nil // its grace period is not over
		}
		// KillAt returns at once when the deadline has passed: it only waits for SIGKILL to land.
		if err := proc.KillAt(s.PID, s.StopBy); err != nil {
			return s, err
		}
		_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "killed", Message: "KILL to what was left of its process group after the grace period (its runner had died)"})
	}
	stopped := false
	n, _, err := r.Store.Modify(ctx, s.ID, nil, func(m *store.Session) { stopped, m.StopBy = !m.StopBy.IsZero(), time.Time{} })
	if err == nil && stopped {
		r.reclaim(ctx, n) // its supervisor died: nobody else removes it
	}
	return n, err
}

// stopPending finishes the stops under way whose supervisors died (see finishStop).
func (r *Runner) stopPending(ctx context.Context) error {
	ss, err := r.Store.Stopping(ctx)
	if err != nil {
		return err
	}
	for _, s := range ss {
		if _, err := r.reconcile(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// Cancel stops a session (retracts an ask). False when it had already ended or is unknown.
func (r *Runner) Cancel(ctx context.Context, id string) (bool, error) {
	s, ok, err := r.Store.Get(ctx, id)
	if err != nil {
		return false, err
	}
	if !ok {
		if err := r.caller.authorize(ctx, "cancel", ""); err != nil {
			return false, err
		}
		return false, nil
	}
	if err := r.caller.authorize(ctx, "cancel", s.Actor); err != nil {
		return false, err
	}
	now := r.opts.Now().UTC()
	// The KILL deadline is recorded with the cancel, before the TERM is sent: its supervisor (or,
	// if that died, whichever runner reconciles next) sends the KILL, so that it happens however
	// this process ends, and cancel returns at once.
	stopBy := time.Now().Add(r.In.grace())
	s, changed, err := r.Store.Modify(ctx, id, []ir.SessionStatus{ir.Running, ir.Paused}, func(m *store.Session) {
		m.Status, m.EndedAt, m.Reason = ir.Cancelled, now, "cancelled by "+r.caller.describe()
		if m.Kind == "agent" && m.PID > 0 {
			m.StopBy = stopBy
		}
	})
	if err != nil || !changed {
		return false, err
	}
	_ = r.Store.Log(ctx, store.Event{Session: id, Actor: s.Actor, Kind: "cancelled", Message: "cancelled by " + r.caller.describe()})
	// A workflow's pause dies with it: its token resumes nothing any more.
	_ = r.Store.DropPauses(ctx, id)
	r.playbooks().settleReview(ctx, id) // a reviewer cancelled fails the session it reviewed (capsule.go)
	if s.Kind == "human" {
		return true, r.asks.engager.Retract(ctx, s)
	}
	if sessionGroup(s) { // its leader may be gone, a process started for it not
		if err := proc.Term(s.PID); err != nil {
			return true, err
		}
	}
	return true, nil
}

// otherSupervisor reports whether pid is the supervisor of a session in flight, as the store
// records it (with its start time). A session that launches another (agent:launch) makes that
// session's supervisor its own descendant; its own supervisor, the subreaper of what it starts,
// leaves it alone. (An agent working in the installation root can write the store, and so
// register a process of its own as a supervisor: the subreaper does not hold against that one.)
func (r *Runner) otherSupervisor(pid int) bool {
	start, err := proc.StartTime(pid)
	if err != nil {
		return false
	}
	if r.supervisor.started.has(pid, start) {
		return true // whatever the store answers (adopt.go)
	}
	ss, err := r.Store.List(context.Background(), store.ListOptions{})
	if err != nil {
		return false
	}
	for _, s := range ss {
		if s.SupervisorPID == pid && s.SupervisorStart == start {
			return true
		}
	}
	return false
}
