package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
)

// lastTickKey is the meta key holding the time of the last tick, in unix nanoseconds.
const lastTickKey = "schedule.lastTick"

// TickReport is what one tick did.
type TickReport struct {
	At time.Time
	// First is set on the first tick of an installation: the schedule starts now, and nothing
	// that came due before is fired.
	First    bool
	Fired    []store.Session
	Deferred []Deferral
	// Escalated are the open asks escalated past their SLA (escalate.go).
	Escalated []Escalation
	// Simulated are the asks the human simulator answered (simulate.go).
	Simulated []string
	// Paused is why nothing fired: the fleet is paused (throttle.go); "" when it is not.
	Paused string
	// Unready are the scheduled actors that cannot start here (their agent CLI or model key
	// missing), and why, with nothing due this tick: no error yet, a warning (their triggers
	// are deferred, and the tick fails, when they come due).
	Unready []Unready
}

// Unready is a scheduled actor that cannot start here, and why.
type Unready struct{ Actor, Reason string }

// Deferral is a due trigger that did not fire, and why; it fires at a later tick.
type Deferral struct {
	Key, Actor, Reason string
	// Again is set when it was deferred by an earlier tick already.
	Again bool
}

// Tick fires every cron trigger whose schedule came due since the last tick, once however many
// slots passed, and retries the ones deferred before; a trigger that cannot fire now (at
// maxConcurrent, or its actor's scheduled session still running) is deferred and recorded,
// never dropped. Concurrent ticks and launches are serialized by the store's write lock.
func (r *Runner) Tick(ctx context.Context) (TickReport, error) {
	if err := r.caller.operatorOnly(ctx, "tick"); err != nil {
		return TickReport{}, err
	}
	if err := r.reconcileAll(ctx); err != nil {
		return TickReport{}, err
	}
	r.advanceProposals(ctx) // the code flow's steps held back (codeflow.go)
	// A scheduled actor that cannot start here (its agent CLI or its model key missing) would fail
	// every time: its due triggers are deferred, saying why, until a tick that can start it; the
	// others fire, and the asks are escalated, as ever. The tick then reports it as an error.
	sched := r.scheduler()
	refusals := r.refusedActors(sched.actors())
	sched.refused = refusals.reasons
	// An edited behavior fails every session it starts: checked for what is about to fire only,
	// not for every actor at every tick.
	sched.verify = func(actor string) string {
		if _, err := r.In.verified(r.In.Actor(actor)); err != nil {
			refusals.add(actor, err)
			return err.Error()
		}
		return ""
	}
	now := r.opts.Now()
	rep := TickReport{At: now.UTC()}
	err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		if rep.Paused, err = skipWhilePaused(tx, now); err != nil || rep.Paused != "" {
			return err
		}
		rep.Fired, rep.Deferred, rep.First, err = sched.fire(tx, now)
		return err
	})
	if err != nil {
		return TickReport{}, err
	}
	started, err := r.startFired(ctx, rep.Fired)
	if started != nil {
		rep.Fired = started // those that failed to start are named in err
	}
	if err != nil {
		return rep, err
	}
	if rep.Simulated, err = r.simulate(ctx, now); err != nil {
		return rep, err
	}
	if rep.Escalated, err = r.escalate(ctx, now); err != nil {
		return rep, err
	}
	named, err := refusals.err(rep.Deferred)
	if rep.Paused == "" { // paused, nothing was due to be deferred: the pause is what tick says
		for _, a := range refusals.actors {
			if !slices.Contains(named, a) {
				rep.Unready = append(rep.Unready, Unready{Actor: a, Reason: refusals.reasons[a]})
			}
		}
	}
	return rep, err
}

// refusals are the scheduled actors a tick cannot start (Preflight), and why.
type refusals struct {
	reasons map[string]string
	actors  []string
}

// refusedActors preflights each actor on its own.
func (r *Runner) refusedActors(actors []string) refusals {
	var rf refusals
	for _, a := range actors {
		if err := r.Preflight(a); err != nil {
			rf.add(a, err)
		}
	}
	return rf
}

// add records that actor cannot start, once.
func (rf *refusals) add(actor string, err error) {
	if _, ok := rf.reasons[actor]; ok {
		return
	}
	if rf.reasons == nil {
		rf.reasons = map[string]string{}
	}
	rf.reasons[actor] = err.Error()
	rf.actors = append(rf.actors, actor)
}

// err is the tick's error for its refusals of actors with a trigger deferred for it (a trigger
// not due is no error, or a crontab's tick would fail every minute of a day nothing fires): the
// first one's, naming the others; named are those actors.
func (rf refusals) err(deferred []Deferral) (named []string, err error) {
	var actors []string
	var first string
	for _, a := range rf.actors {
		if slices.ContainsFunc(deferred, func(d Deferral) bool { return d.Actor == a && d.Reason == rf.reasons[a] }) {
			if actors = append(actors, a); first == "" {
				first = rf.reasons[a]
			}
		}
	}
	if first == "" {
		return nil, nil
	}
	msg := first
	if n := len(actors); n > 1 {
		msg += fmt.Sprintf(" (and %d more scheduled actors cannot start: %s)", n-1, strings.Join(actors[1:], ", "))
	}
	msg += "; their due triggers are deferred until a tick can start them"
	return actors, &RefusedError{Msg: msg}
}

// reconcileAll reconciles every agent session in flight, so a dead one frees its capacity.
func (r *Runner) reconcileAll(ctx context.Context) error {
	ss, err := r.Store.List(ctx, store.ListOptions{})
	if err != nil {
		return err
	}
	for _, s := range ss {
		if _, err := r.reconcile(ctx, s); err != nil {
			return err
		}
	}
	return r.stopPending(ctx)
}

// NextWake is when the schedule next needs a tick after now: the earliest next firing, or the
// next minute while a deferred trigger waits; at most an hour away, so a recompiled schedule
// and orphaned sessions are picked up.
func (r *Runner) NextWake(ctx context.Context, now time.Time) time.Time {
	return r.scheduler().nextWake(ctx, r.Store, now)
}

// Serve ticks at each due minute until ctx ends (SIGINT or SIGTERM in the CLI). Sessions it
// started keep running under their own supervisors and stay tracked after it returns. Each
// tick rereads the installation, so a recompile takes effect without a restart.
func (r *Runner) Serve(ctx context.Context, w io.Writer) error {
	if err := r.caller.operatorOnly(ctx, "serve"); err != nil {
		return err
	}
	var said serveSaid
	for {
		wake, err := r.serveOnce(ctx, w, &said)
		if err != nil {
			return nil // ctx ended
		}
		t := time.NewTimer(time.Until(wake))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// serveOnce is one of serve's ticks: the installation read again, then the tick; it returns
// when serve wakes next, or ctx's error once ctx ended. An installation that cannot be read (a
// hand-edited schedule, runner config or manifest) fires nothing: every session's supervisor
// would refuse it (newc9: a session fired from the installation read before failed, "its
// runner died before starting it"). The triggers that come due meanwhile fire once it is read
// again, once each however many slots passed, as after any pause.
func (r *Runner) serveOnce(ctx context.Context, w io.Writer, said *serveSaid) (time.Time, error) {
	if in, err := Open(r.In.Dir); err != nil {
		said.say(w, &said.open, fmt.Sprintf("autonomy: nothing fires until the installation is read again (serve tries each minute): %v", err))
		return r.opts.Now().Truncate(time.Minute).Add(time.Minute), ctx.Err()
	} else if r.opts.Detach {
		in.graceOverride = r.opts.Grace
		in.keepActors(r.In)
		r.In = in
	}
	said.open = ""
	rep, err := r.Tick(ctx)
	if err != nil && ctx.Err() != nil {
		return time.Time{}, ctx.Err()
	}
	PrintTick(w, said.news(rep))
	if err != nil {
		said.say(w, &said.tick, fmt.Sprintf("autonomy: tick failed: %v", err))
	} else {
		said.tick = ""
	}
	return r.serveWake(ctx, w), nil
}

// HoldServe takes the installation's serve lock for as long as this process serves: alone is
// false when another process serves the installation already (both tick; the store keeps them
// from firing a trigger twice), or when it cannot be told. free drops it.
func (r *Runner) HoldServe() (free func(), alone bool) {
	path := r.In.Path(StateDir + "/serve.lock")
	if f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600); err == nil {
		f.Close()
	}
	free, held, err := tryLock(path, true)
	if err != nil || !held {
		return func() {}, err != nil
	}
	return free, true
}

// serveSaid is what serve last said that stays true from one tick to the next (an installation
// it cannot read, a tick's error, the fleet's pause, a trigger still deferred): said once, not
// every minute, and again once it changed.
type serveSaid struct {
	open, tick, paused string
	// deferred is each trigger still deferred, and why, as last said.
	deferred map[string]string
}

// say writes line unless it is what *last holds, and keeps it there.
func (serveSaid) say(w io.Writer, last *string, line string) {
	if line != *last {
		fmt.Fprintln(w, line)
		*last = line
	}
}

// news is rep without what serve said already: the pause it reported, the triggers deferred
// before.
func (s *serveSaid) news(rep TickReport) TickReport {
	paused := rep.Paused
	if paused == s.paused {
		rep.Paused = ""
	}
	s.paused = paused
	var fresh []Deferral
	now := make(map[string]string, len(rep.Deferred))
	for _, d := range rep.Deferred {
		if why, said := s.deferred[d.Key]; !d.Again || !said || why != d.Reason {
			fresh = append(fresh, d) // new, or deferred now for another reason
		}
		now[d.Key] = d.Reason
	}
	s.deferred = now
	rep.Deferred = fresh
	return rep
}

// serveWake is when serve next ticks: the schedule's next firing, the event poll's, an ask's
// escalation or the simulator's answer, whichever comes first; and at least once a minute, so
// that a recompile bringing the schedule nearer takes effect then, not at the wake the schedule
// read before named (up to an hour away).
func (r *Runner) serveWake(ctx context.Context, w io.Writer) time.Time {
	wake := r.NextWake(ctx, r.opts.Now())
	if r.events != nil {
		wake = r.events.serve(ctx, w, wake)
	}
	wake = r.escalationWake(ctx, wake)
	wake = r.simulationWake(ctx, wake)
	if m := r.opts.Now().Truncate(time.Minute).Add(time.Minute); m.Before(wake) {
		wake = m
	}
	return wake
}

// PrintTick writes a tick's report, one line per firing and deferral.
func PrintTick(w io.Writer, rep TickReport) {
	at := rep.At.Format(time.RFC3339)
	if rep.First {
		fmt.Fprintf(w, "%s first tick: the schedule starts now\n", at)
	}
	if rep.Paused != "" {
		fmt.Fprintf(w, "%s paused: %s\n", at, rep.Paused)
	}
	for _, s := range rep.Fired {
		fmt.Fprintf(w, "%s fired %s: session %s\n", at, s.Actor, s.ID)
	}
	for _, d := range rep.Deferred {
		fmt.Fprintf(w, "%s deferred %s: %s\n", at, d.Key, d.Reason)
	}
	for _, id := range rep.Simulated {
		fmt.Fprintf(w, "%s the human simulator answered the ask %s\n", at, id)
	}
	for _, e := range rep.Escalated {
		fmt.Fprintf(w, "%s escalated the ask %s of %s to %s (escalation %d; open %s)\n", at, e.Session, e.Actor, e.To, e.N, e.Waited)
	}
}
