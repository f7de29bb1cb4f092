package local

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
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
}

// Deferral is a due trigger that did not fire, and why; it fires at a later tick.
type Deferral struct {
	Key, Actor, Reason string
}

// Tick fires every cron trigger whose schedule came due since the last tick, once however many
// slots passed, and retries the ones deferred before; a trigger that cannot fire now (at
// maxConcurrent, or its actor's scheduled session still running) is deferred and recorded,
// never dropped. Concurrent ticks and launches are serialized by the store's write lock.
func (r *Runner) Tick(ctx context.Context) (TickReport, error) {
	if r.caller != nil {
		return TickReport{}, r.denyOperatorOnly(ctx, "tick")
	}
	if err := r.reconcileAll(ctx); err != nil {
		return TickReport{}, err
	}
	// A scheduled skill whose agent is not installed fails every time: refuse before firing any.
	if err := r.Preflight(r.scheduledActors()...); err != nil {
		return TickReport{}, err
	}
	now := r.opts.Now()
	rep := TickReport{At: now.UTC()}
	err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		rep.Fired, rep.Deferred, rep.First = nil, nil, false
		raw, ok, err := tx.Meta(lastTickKey)
		if err != nil {
			return err
		}
		if !ok {
			rep.First = true
			return tx.SetMeta(lastTickKey, strconv.FormatInt(now.UnixNano(), 10))
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return fmt.Errorf("the store's last tick %q is not a time: %v", raw, err)
		}
		last := time.Unix(0, n).In(r.In.Location)
		pending, err := tx.Pending()
		if err != nil {
			return err
		}
		active := -1
		for _, e := range r.In.Schedule.Entries {
			since, wasPending := pending[e.Key]
			if !wasPending {
				next := r.In.Cron[e.Key].Next(last)
				if next.IsZero() || next.After(now) {
					continue
				}
				since = next
			}
			admitted, reason, err := r.admit(tx, e.Actor, true, &active)
			if err != nil {
				return err
			}
			if !admitted {
				rep.Deferred = append(rep.Deferred, Deferral{Key: e.Key, Actor: e.Actor, Reason: reason})
				if wasPending {
					continue // recorded when it was first deferred
				}
				if err := tx.SetPending(e.Key, since); err != nil {
					return err
				}
				if err := tx.Log(store.Event{Actor: e.Actor, Kind: "deferred", Message: fmt.Sprintf("cron %q due at %s deferred: %s", e.Cron, since.UTC().Format(time.RFC3339), reason)}); err != nil {
					return err
				}
				continue
			}
			cfg, err := r.In.Actor(e.Actor)
			if err != nil {
				return err
			}
			params, err := r.resolve(cfg, firingTrigger(cfg, ir.Cron, e.Trigger), LaunchRequest{Kind: "cron"})
			if err != nil {
				return err
			}
			s := store.Session{Actor: cfg.Actor, Kind: cfg.Kind, Params: params, Trigger: "cron", Origin: "schedule"}
			if err := r.insert(tx, cfg, &s); err != nil {
				return err
			}
			if wasPending {
				if err := tx.ClearPending(e.Key); err != nil {
					return err
				}
			}
			if active >= 0 {
				active++
			}
			rep.Fired = append(rep.Fired, s)
		}
		if now.After(last) {
			return tx.SetMeta(lastTickKey, strconv.FormatInt(now.UnixNano(), 10))
		}
		return nil // the clock went back: keep the later mark so nothing fires twice
	})
	if err != nil {
		return TickReport{}, err
	}
	for i, s := range rep.Fired {
		if err := r.start(ctx, s); err != nil {
			return rep, err
		}
		if n, ok, err := r.Store.Get(ctx, s.ID); err == nil && ok {
			rep.Fired[i] = n
		}
	}
	return rep, nil
}

func (r *Runner) denyOperatorOnly(ctx context.Context, verb string) error {
	msg := fmt.Sprintf("%s may not %s: the trigger executor is the operator's, never a session's", r.describe(), verb)
	_ = r.Store.Log(ctx, store.Event{Session: r.caller.session.ID, Actor: r.caller.session.Actor, Kind: "denied", Message: msg})
	return &DeniedError{Msg: msg}
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
	wake := now.Add(time.Hour)
	local := now.In(r.In.Location)
	for _, e := range r.In.Schedule.Entries {
		if next := r.In.Cron[e.Key].Next(local); !next.IsZero() && next.Before(wake) {
			wake = next
		}
	}
	var pending map[string]time.Time
	_ = r.Store.Tx(ctx, func(tx *store.Tx) error {
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

// Serve ticks at each due minute until ctx ends (SIGINT or SIGTERM in the CLI). Sessions it
// started keep running under their own supervisors and stay tracked after it returns. Each
// tick rereads the installation, so a recompile takes effect without a restart.
func (r *Runner) Serve(ctx context.Context, w io.Writer) error {
	if r.caller != nil {
		return r.denyOperatorOnly(ctx, "serve")
	}
	if err := r.Preflight(r.scheduledActors()...); err != nil {
		return err
	}
	for {
		if in, err := Open(r.In.Dir); err == nil && r.opts.Detach {
			r.In = in
		} else if err != nil {
			fmt.Fprintf(w, "autonomy: %v (keeping the installation read before)\n", err)
		}
		rep, err := r.Tick(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			fmt.Fprintf(w, "autonomy: tick failed: %v\n", err)
		} else {
			PrintTick(w, rep)
		}
		wake := r.NextWake(ctx, r.opts.Now())
		t := time.NewTimer(time.Until(wake))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// PrintTick writes a tick's report, one line per firing and deferral.
func PrintTick(w io.Writer, rep TickReport) {
	at := rep.At.Format(time.RFC3339)
	if rep.First {
		fmt.Fprintf(w, "%s first tick: the schedule starts now\n", at)
	}
	for _, s := range rep.Fired {
		fmt.Fprintf(w, "%s fired %s: session %s\n", at, s.Actor, s.ID)
	}
	for _, d := range rep.Deferred {
		fmt.Fprintf(w, "%s deferred %s: %s\n", at, d.Key, d.Reason)
	}
}
