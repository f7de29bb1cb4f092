package local

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// scheduler is the trigger executor's clockwork: from an installation's cron entries, the last
// tick and the deferred triggers (both in the store), it decides what a tick fires and when the
// next tick is due. Launching is not its own: admit and record are the launcher's (launch.go).
type scheduler struct {
	in *Install
	// admit says whether a scheduled session of actor may start now, or why not; active is as
	// in Runner.admit.
	admit func(tx *store.Tx, actor string, active *int) (bool, string, error)
	// record inserts the session a cron entry fires.
	record func(tx *store.Tx, e Entry) (store.Session, error)
	// refused are the actors that cannot start here, and why (Tick's preflight): their due
	// entries are deferred.
	refused map[string]string
	// verify says why an actor about to fire may not ("" when it may): its due entry is then
	// deferred too. nil checks nothing.
	verify func(actor string) string
}

// scheduler is the scheduler of r's installation, launching through r.
func (r *Runner) scheduler() scheduler {
	return scheduler{
		in: r.In,
		admit: func(tx *store.Tx, actor string, active *int) (bool, string, error) {
			return r.admit(tx, actor, true, active)
		},
		record: func(tx *store.Tx, e Entry) (store.Session, error) {
			cfg, err := r.In.Actor(e.Actor)
			if err != nil {
				return store.Session{}, err
			}
			params, err := r.resolve(cfg, firingTrigger(cfg, ir.Cron, e.Trigger), LaunchRequest{Kind: "cron"})
			if err != nil {
				return store.Session{}, err
			}
			s := store.Session{Actor: cfg.Actor, Kind: cfg.Kind, Params: params, Trigger: "cron", Origin: "schedule"}
			return s, r.insert(tx, cfg, &s)
		},
	}
}

// actors lists the actors of the schedule, each once.
func (sc scheduler) actors() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range sc.in.Schedule.Entries {
		if !seen[e.Actor] {
			seen[e.Actor] = true
			out = append(out, e.Actor)
		}
	}
	return out
}

// fire records, in tx, a session for every cron entry due since the last tick (once however
// many slots passed) and for every entry deferred before that may start now, and defers the
// others; first is set when the installation had no tick yet: the schedule starts now.
func (sc scheduler) fire(tx *store.Tx, now time.Time) (fired []store.Session, deferred []Deferral, first bool, err error) {
	raw, ok, err := tx.Meta(lastTickKey)
	if err != nil {
		return nil, nil, false, err
	}
	if !ok {
		return nil, nil, true, tx.SetMeta(lastTickKey, strconv.FormatInt(now.UnixNano(), 10))
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return nil, nil, false, fmt.Errorf("the store's last tick %q is not a time: %v", raw, err)
	}
	last := time.Unix(0, n).In(sc.in.Location)
	pending, err := tx.Pending()
	if err != nil {
		return nil, nil, false, err
	}
	active := -1
	var later deferrals
	for _, e := range sc.in.Schedule.Entries {
		since, wasPending := pending[e.Key]
		if !wasPending {
			next := sc.in.Cron[e.Key].Next(last)
			if next.IsZero() || next.After(now) {
				continue
			}
			since = next
		}
		s, d, err := sc.fireEntry(tx, e, since, wasPending, &active, &later)
		if err != nil {
			return nil, nil, false, err
		}
		if d != nil {
			deferred = append(deferred, *d)
			continue
		}
		fired = append(fired, s)
	}
	if err := later.record(tx); err != nil {
		return nil, nil, false, err
	}
	// A deferred trigger a recompile removed never fires: forget it.
	for key := range pending {
		if _, ok := sc.in.Cron[key]; !ok {
			if err := tx.ClearPending(key); err != nil {
				return nil, nil, false, err
			}
		}
	}
	if now.After(last) {
		return fired, deferred, false, tx.SetMeta(lastTickKey, strconv.FormatInt(now.UnixNano(), 10))
	}
	return fired, deferred, false, nil // the clock went back: keep the later mark so nothing fires twice
}

// deferrals are the firings a tick defers for the first time: each a pending row and an event of
// the audit log, written together once the tick has decided every entry (a tick at capacity
// defers nearly all of a large fleet's).
type deferrals struct {
	pending []store.PendingFiring
	events  []store.Event
}

func (d *deferrals) record(tx *store.Tx) error {
	if err := tx.SetPendingAll(d.pending); err != nil {
		return err
	}
	return tx.LogAll(d.events)
}

// fireEntry fires the cron entry e, due since since (wasPending: deferred before), or defers it,
// adding the deferral to later the first time.
func (sc scheduler) fireEntry(tx *store.Tx, e Entry, since time.Time, wasPending bool, active *int, later *deferrals) (store.Session, *Deferral, error) {
	admitted, reason, err := sc.admit(tx, e.Actor, active)
	if err != nil {
		return store.Session{}, nil, err
	}
	if why, no := sc.refused[e.Actor]; no && admitted {
		admitted, reason = false, why
	}
	if admitted && sc.verify != nil {
		if why := sc.verify(e.Actor); why != "" {
			admitted, reason = false, why
		}
	}
	if !admitted {
		d := &Deferral{Key: e.Key, Actor: e.Actor, Reason: reason, Again: wasPending}
		if wasPending {
			return store.Session{}, d, nil // recorded when it was first deferred
		}
		later.pending = append(later.pending, store.PendingFiring{Key: e.Key, Since: since})
		later.events = append(later.events, store.Event{Actor: e.Actor, Kind: "deferred", Message: fmt.Sprintf("cron %q due at %s deferred: %s", e.Cron, since.UTC().Format(time.RFC3339), reason)})
		return store.Session{}, d, nil
	}
	s, err := sc.record(tx, e)
	if err != nil {
		return store.Session{}, nil, err
	}
	if wasPending {
		if err := tx.ClearPending(e.Key); err != nil {
			return store.Session{}, nil, err
		}
	}
	if *active >= 0 {
		*active++
	}
	return s, nil, nil
}

// nextWake is when the schedule next needs a tick after now: the earliest next firing, or the
// next minute while a deferred trigger waits; at most an hour away, so a recompiled schedule
// and orphaned sessions are picked up.
// NextFiring is the schedule's next firing after now, in its timezone, and the actor it fires
// (the first in the schedule's order of those due then); ok is false when nothing is scheduled.
func (r *Runner) NextFiring(now time.Time) (actor string, at time.Time, ok bool) {
	in := r.In
	local := now.In(in.Location)
	for _, e := range in.Schedule.Entries {
		if next := in.Cron[e.Key].Next(local); !next.IsZero() && (!ok || next.Before(at)) {
			actor, at, ok = e.Actor, next, true
		}
	}
	return actor, at, ok
}

func (sc scheduler) nextWake(ctx context.Context, st *store.Store, now time.Time) time.Time {
	wake := now.Add(time.Hour)
	local := now.In(sc.in.Location)
	for _, e := range sc.in.Schedule.Entries {
		if next := sc.in.Cron[e.Key].Next(local); !next.IsZero() && next.Before(wake) {
			wake = next
		}
	}
	var pending map[string]time.Time
	_ = st.Tx(ctx, func(tx *store.Tx) error {
		var err error
		pending, err = tx.Pending()
		return err
	})
	if len(pending) > 0 {
		if m := now.Truncate(time.Minute).Add(time.Minute); m.Before(wake) {
			wake = m
		}
	}
	return wake
}
