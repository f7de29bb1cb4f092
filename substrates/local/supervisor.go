package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// supervisor is what this process holds to supervise sessions: which ones it supervises, the
// stops it is told of, the ends it keeps should the store refuse them, and the checks and records
// around a session's start and exit.
type supervisor struct {
	store *store.Store
	now   func() time.Time
	set   supervisors
	stops stopWatch
	// outcomes keeps the ends the store could not take (outcome.go).
	outcomes outcomes
	// subreaper says this process supervises one session only, as the child subreaper of what it
	// starts (Supervise): it may kill every child left over (killEscaped).
	subreaper bool
	// started are the supervisors this process started (adopt.go).
	started startedSupervisors
	// phaseHook, set by tests only, is called as a supervisor reaches each step of preparing a
	// session.
	phaseHook func(phase, id string)
	// startedHook, set by tests only, is called once this process started a detached supervisor,
	// before it records it as the session's.
	startedHook func(id string)
}

// newSupervisor is the supervisor of the installation in, whose store is st.
func newSupervisor(in *Install, st *store.Store, now func() time.Time) *supervisor {
	sp := &supervisor{store: st, now: now, stops: stopWatch{stopping: st.Stopping}}
	sp.outcomes = outcomes{in: in, store: st, supervising: sp.set.has, retryFor: defaultEndRetryFor, backoff: defaultEndBackoff}
	return sp
}

// supervisors is the set of sessions this process supervises: whether it supervises one (only
// then does a failed write of its end keep the outcome, outcome.go; and its supervisor is alive),
// and a wait for the ones it runs in goroutines (Options.Detach false) to end.
type supervisors struct {
	mu  sync.Mutex
	ids map[string]bool
	wg  sync.WaitGroup
}

// hold records that this process supervises session id.
func (v *supervisors) hold(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ids == nil {
		v.ids = map[string]bool{}
	}
	v.ids[id] = true
}

// release records that this process no longer supervises session id.
func (v *supervisors) release(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.ids, id)
}

// has says whether this process supervises session id.
func (v *supervisors) has(id string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ids[id]
}

// run runs supervise in a goroutine that wait waits for, releasing id when it returns.
func (v *supervisors) run(id string, supervise func()) {
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		defer v.release(id)
		supervise()
	}()
}

// wait waits for every supervision run started.
func (v *supervisors) wait() { v.wg.Wait() }

// phase calls the test hook, when one is set, as a supervisor reaches a step of preparing a
// session ("workspace", "prelaunch", "start"): tests slow a step down to cancel during it.
func (sp *supervisor) phase(name, id string) {
	if sp.phaseHook != nil {
		sp.phaseHook(name, id)
	}
}

// cancelled reports whether the session ended (was cancelled) while its supervisor prepared it.
// A store that cannot be read does not count as a cancel: the start records the process in a
// transaction that checks again.
func (sp *supervisor) cancelled(ctx context.Context, id string) bool {
	s, ok, err := sp.store.Get(ctx, id)
	return err == nil && (!ok || s.Status.Ended())
}

// watchCancel polls, every watchEvery until forget is called, whether the session was cancelled
// (by any process), and closes stop when it was: what stops a prelaunch under way. The process
// has no pid recorded yet, so the cancel itself signals nothing.
func (sp *supervisor) watchCancel(id string) (stop <-chan struct{}, forget func()) {
	ch := make(chan struct{})
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if sp.cancelled(context.Background(), id) {
					close(ch)
					return
				}
			}
		}
	}()
	return ch, func() {
		close(quit)
		<-done
	}
}

// startRecorded starts the session's process and records its pid in one write transaction that
// first checks the session is still in flight. A cancel is a write too, so either it came first
// and nothing starts (started false), or it comes after the pid is recorded and stops the
// process as it stops any running session. A session paused while it was prepared is not
// started: the supervisor holds it, saying so in logf, and starts it once it is resumed, or
// starts nothing when it is cancelled meanwhile. (Started and then stopped, it would run
// unpaused until the STOP landed: on a loaded machine, to its end.) startErr is the process's
// failure to start; err the store's failure to record it (the process started and must be
// stopped).
func (sp *supervisor) startRecorded(ctx context.Context, id string, cmd *exec.Cmd, workdir string, logf io.Writer) (started bool, startErr, err error) {
	var wait *time.Ticker
	for {
		var paused bool
		started, paused, startErr, err = sp.startUnlessPaused(ctx, id, cmd, workdir)
		if !paused || err != nil {
			break
		}
		if wait == nil {
			fmt.Fprintf(logf, "autonomy: paused before its agent started: it starts when resumed (autonomy runner update %s --status running)\n", id)
			sp.phase("held", id)
			wait = time.NewTicker(watchEvery)
			defer wait.Stop()
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err(), nil
		case <-wait.C:
		}
	}
	if err != nil && !started {
		// Nothing started: the store's failure is the session's.
		return false, err, nil
	}
	return started, startErr, err
}

// startUnlessPaused is one attempt of startRecorded: in one write transaction, nothing when the
// session ended, paused when it is paused, else the process started and its pid recorded.
func (sp *supervisor) startUnlessPaused(ctx context.Context, id string, cmd *exec.Cmd, workdir string) (started, paused bool, startErr, err error) {
	err = sp.store.Tx(ctx, func(tx *store.Tx) error {
		cur, ok, err := tx.Get(id)
		if err != nil || !ok || cur.Status.Ended() {
			return err
		}
		if cur.Status == ir.Paused {
			paused = true
			return nil
		}
		if startErr = cmd.Start(); startErr != nil {
			return nil
		}
		started = true
		pid := cmd.Process.Pid
		pstart, _ := proc.StartTime(pid)
		startedAt := sp.now().UTC()
		self := os.Getpid()
		selfStart, _ := proc.StartTime(self)
		_, _, err = tx.Modify(id, []ir.SessionStatus{ir.Running}, func(m *store.Session) {
			m.PID, m.PIDStart, m.StartedAt, m.Workdir = pid, pstart, startedAt, workdir
			// A detached supervisor's launcher records it only once it started it: a launcher
			// slow to (a loaded machine) would leave a session whose process is on record, and
			// may have ended, with no supervisor on record, which runner list fails as orphaned.
			// So the process is never on record without its supervisor (this process).
			if m.SupervisorPID == 0 {
				m.SupervisorPID, m.SupervisorStart = self, selfStart
			}
		})
		return err
	})
	return started, paused, startErr, err
}

// watch waits for the session's process to exit, stopping its group at its timeout (TERM, KILL
// after the grace period) or when the session is cancelled (the canceller sent TERM and recorded
// when KILL is due); grace is the wait between TERM and KILL. It returns the process's exit and whether it timed out.
func (sp *supervisor) watch(id string, pid int, timeout, grace time.Duration, exited <-chan error, logf io.Writer) (error, bool) {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	stop, forget := sp.stops.await(id)
	defer forget()
	select {
	case err := <-exited:
		return err, false
	case <-expired:
		fmt.Fprintf(logf, "autonomy: timed out after %s: TERM to its process group, KILL after %s\n", timeout, grace)
		_ = proc.Terminate(pid, grace)
		return <-exited, true
	case by := <-stop:
		if err := proc.KillAt(pid, by); err != nil {
			fmt.Fprintf(logf, "autonomy: %v\n", err)
		}
		return <-exited, false
	}
}

// alive reports whether a session still has a runner watching it: this process, or
// its recorded supervisor.
func (sp *supervisor) alive(s store.Session) bool {
	if sp.set.has(s.ID) {
		return true
	}
	return s.SupervisorPID > 0 && proc.Alive(s.SupervisorPID, s.SupervisorStart)
}
