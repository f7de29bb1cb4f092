package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// A step playbook session whose supervisor died is continued, not failed: its run is checkpointed
// in the store before and after every step (playbook/stepsrun), so whichever process reconciles
// it first claims it, in one transaction, and starts a new supervisor the way launch does. That
// supervisor stops what is left of the old run (its output went to the dead supervisor, so it can
// never report), and runs the playbook again over the same checkpoint: it continues at the step
// that was running when the runner died (its output was never recorded, so it runs again), and a
// step recorded done never runs again. Each continuation is an event "resumed" in the audit log,
// which also bounds them: past MaxContinuations the session fails.
//
// A workflow playbook (seed 003) is not continued: its engine records a run only when it pauses at
// an approval (a parked session is durable, and needs no supervisor), not step by step, so a
// running one whose supervisor died would run its completed steps again; it fails, orphaned.

// MaxContinuations is how many times reconciliation continues one session whose supervisor died.
const MaxContinuations = 3

// resumedEvent is the kind of the event that records a continuation, and counts them.
const resumedEvent = "resumed"

// continuable reports whether s, whose supervisor died, is continued rather than failed: a step
// playbook session working in the installation root. One in a worktree of its own (workspace:
// isolated, --branch) is not: the new supervisor would need the dead one's worktree, whose
// starting commit only that one knew.
func (pb *playbooks) continuable(s store.Session) bool {
	if s.Branch != "" || s.Worktree {
		return false
	}
	cfg, err := pb.in.Actor(s.Actor)
	return err == nil && cfg.Steps && cfg.Workspace != "isolated"
}

// heldEvent is the event of a step playbook session whose supervisor died that a process without
// its model's key did not continue.
const heldEvent = "held"

// takeOver continues s, a step playbook session whose supervisor died (or, past startGrace, was
// never recorded), when the operator reconciles (runner list, get, the schedule): its new
// supervisor runs in the environment of the process that starts it, where the agent command and
// the secrets are read, and an agent's call from inside a session must choose neither. A
// session's call leaves it as it is, for the operator's next reconciliation.
func (pb *playbooks) takeOver(ctx context.Context, s store.Session) (store.Session, error) {
	if pb.caller != nil {
		return s, nil
	}
	if s.SupervisorPID == 0 && pb.now().Sub(s.CreatedAt) < startGrace {
		// Its launcher is still recording the supervisor it started, which may have started
		// the run already: that one is alive.
		return s, nil
	}
	if why := pb.noProxyNow(ctx, withoutAgentOverride(pb.env), s); why != "" {
		// Left for a reconciliation where the key is, said once in its events.
		_ = pb.store.Tx(ctx, func(tx *store.Tx) error {
			if n, err := tx.CountEvents(s.ID, heldEvent); err != nil || n > 0 {
				return err
			}
			return tx.Log(store.Event{Session: s.ID, Actor: s.Actor, Kind: heldEvent,
				Message: "not continued by " + pb.caller.describe() + ": it " + why + "; the next runner list, get, tick or serve that can continue it will (where the key is set, the installation compiled again)"})
		})
		return s, nil
	}
	return pb.continueSteps(ctx, s)
}

// continueSteps claims s, a step playbook session whose supervisor died, and starts its new
// supervisor; past MaxContinuations it fails it instead. The claim is a compare-and-set in one
// transaction: the session must still be running with the dead supervisor and the process this
// reconciliation saw, and then records this process as its supervisor (alive, so nobody else
// claims it) until start hands it over to the new one. Of two processes reconciling at once, one
// claims it and the other finds it claimed.
func (pb *playbooks) continueSteps(ctx context.Context, s store.Session) (store.Session, error) {
	if pb.host == nil {
		return s, ErrNoPlaybookHost // it stays as it is, for a runner that hosts playbooks
	}
	self := os.Getpid()
	selfStart, _ := proc.StartTime(self)
	var claimed bool
	var n int
	var next string
	checkpointed := false
	err := pb.store.Tx(ctx, func(tx *store.Tx) error {
		cur, ok, err := tx.Get(s.ID)
		if err != nil || !ok {
			return err
		}
		if cur.Status != ir.Running || cur.SupervisorPID != s.SupervisorPID || cur.SupervisorStart != s.SupervisorStart ||
			cur.PID != s.PID || cur.PIDStart != s.PIDStart {
			return nil // reconciled meanwhile by another process
		}
		if n, err = tx.CountEvents(s.ID, resumedEvent); err != nil {
			return err
		}
		raw, ok, err := tx.GetState(playproto.SessionKey(s.ID))
		if err != nil {
			return err
		}
		if ok {
			checkpointed, next = true, pb.host.NextStep(raw)
		}
		if n >= MaxContinuations {
			return nil
		}
		if _, _, err := tx.Modify(s.ID, []ir.SessionStatus{ir.Running}, func(m *store.Session) {
			m.SupervisorPID, m.SupervisorStart = self, selfStart
		}); err != nil {
			return err
		}
		claimed = true
		return tx.Log(store.Event{Session: s.ID, Actor: s.Actor, Kind: resumedEvent,
			Message: fmt.Sprintf("continued by %s (continuation %d of at most %d): its supervising runner died; it resumes %s",
				pb.caller.describe(), n+1, MaxContinuations, resumesAt(checkpointed, next))})
	})
	if err != nil {
		return s, err
	}
	if claimed {
		cur, _, err := pb.store.Get(ctx, s.ID)
		if err != nil {
			return s, err
		}
		if err := pb.ctl.start(ctx, cur); err != nil {
			return cur, err
		}
	} else if n >= MaxContinuations {
		var stopBy time.Time
		if sessionGroup(s) { // its leader may be gone, a process started for it not
			stopBy = time.Now().Add(pb.in.grace())
		}
		reason := fmt.Sprintf("its supervising runner died %d times: it was continued %d times already, the most allowed (%d), so it is not continued again (it would have resumed %s); launch it again to start over",
			n+1, n, MaxContinuations, resumesAt(checkpointed, next))
		ended, err := pb.ctl.end(ctx, s.ID, ir.Failed, reason, "", nil, stopBy)
		if err != nil {
			return s, err
		}
		if ended {
			_ = pb.store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "orphaned", Message: reason})
			if !stopBy.IsZero() {
				_ = proc.Term(s.PID) // recorded first: whoever reconciles next KILLs at stopBy
			}
			// A step's agent left behind by a run killed outright: KILL, as the run itself
			// stops its agent.
			for _, g := range proc.GroupsWithEnv(SessionEnv + "=" + s.ID) {
				if g != s.PID {
					_ = proc.Kill(g)
				}
			}
			if stopBy.IsZero() {
				pb.ctl.reclaim(ctx, s) // with a stop under way, once it is over (finishStop)
			}
		}
	}
	cur, _, err := pb.store.Get(ctx, s.ID)
	return cur, err
}

// resumesAt says where a continued run picks up, from its checkpoint (NextStep).
func resumesAt(checkpointed bool, next string) string {
	switch {
	case !checkpointed:
		return "from its start (no step was checkpointed)"
	case next == "":
		return "after its last step (every step is recorded done: nothing runs again)"
	}
	return "at step " + next
}

// resumeRun is where the new supervisor of a continued session starts: its log says how it was
// continued (the last "resumed" event), and what is left of the old run is stopped (stopLeftover).
// It says whether the session can go on.
func (pb *playbooks) resumeRun(ctx context.Context, s store.Session, logf io.Writer) bool {
	if es, err := pb.store.Events(ctx, s.ID, 20); err == nil {
		for i := len(es) - 1; i >= 0; i-- {
			if es[i].Kind == resumedEvent {
				fmt.Fprintf(logf, "autonomy: %s\n", es[i].Message)
				break
			}
		}
	}
	return pb.stopLeftover(s, logf)
}

// stopLeftover, in the new supervisor of a continued session, stops what is left of the run its
// dead supervisor started: that run's output went to the dead supervisor, so it can never report,
// and two runs must not work on one checkpoint. That is the run's process group, and every other
// group holding a process started in the session (its environment names the session): the agent
// of the step in flight runs in a group of its own, and outlives a run that was killed outright.
// TERM to them all (a run stops its step's agent), then KILL after the grace period. It says
// whether they are gone.
func (pb *playbooks) stopLeftover(s store.Session, logf io.Writer) bool {
	var groups []int
	if s.PID > 0 && sessionGroup(s) {
		groups = append(groups, s.PID)
	}
	for _, g := range proc.GroupsWithEnv(SessionEnv + "=" + s.ID) {
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return true
	}
	fmt.Fprintf(logf, "autonomy: its supervising runner died: stopping what is left of the run it started (process groups %v: TERM, then KILL after %s)\n", groups, pb.in.grace())
	for _, g := range groups {
		_ = proc.Term(g)
	}
	deadline, ok := time.Now().Add(pb.in.grace()), true
	for _, g := range groups {
		if err := proc.KillAt(g, deadline); err != nil {
			fmt.Fprintf(logf, "autonomy: %v\n", err)
			ok = false
		}
	}
	return ok
}
