package local

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// The escalation of open asks, as the control workflow's sweep does on GitHub: an ask to a
// person left unresolved policy.box.human.sla_minutes after its last notice (the ask, or its
// last escalation) is escalated to the next maintainer of policy.box.local.maintainers (the
// operator when none is listed): escalation N goes to maintainer N mod the list's length, so
// the first goes to the second maintainer, the ask itself having gone to all. Tick runs it.
// It never resolves an ask.

// Escalation is one open ask re-notified past its SLA.
type Escalation struct {
	Session, Actor, To string
	// N counts the ask's escalations, this one included.
	N int
	// Waited is how long the ask has been open.
	Waited time.Duration
}

// Escalator is an Engager that also tells the next maintainer of an ask left open past its SLA.
// The attention file lists the escalations with each ask.
type Escalator interface {
	Escalate(ctx context.Context, s store.Session, e Escalation) error
}

// escalationKey is the store's meta key of an ask's escalations: "<n> <last notice, unix ns>
// <to whom>".
func escalationKey(id string) string { return "asks.escalation." + id }

// escalationState reads an ask's escalations: how many, its last notice (when none, the ask)
// and to whom the last went.
func escalationState(tx *store.Tx, s store.Session) (int, time.Time, string, error) {
	raw, ok, err := tx.Meta(escalationKey(s.ID))
	if err != nil || !ok {
		return 0, s.CreatedAt, "", err
	}
	f := strings.SplitN(raw, " ", 3)
	if len(f) == 3 {
		n, err1 := strconv.Atoi(f[0])
		at, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 == nil && err2 == nil {
			return n, time.Unix(0, at).UTC(), f[2], nil
		}
	}
	return 0, time.Time{}, "", fmt.Errorf("the store's escalation record of %s, %q, is not <n> <time> <to>", s.ID, raw)
}

// maintainers are whom escalations rotate through.
func (r *Runner) maintainers() []string {
	if a := r.In.Runner.Asks; a != nil && len(a.Maintainers) > 0 {
		return a.Maintainers
	}
	return []string{userName()}
}

// sla is how long an ask waits after its last notice before it is escalated; 0 when the
// installation escalates nothing.
func (r *Runner) sla() time.Duration {
	if a := r.In.Runner.Asks; a != nil && a.SLAMinutes > 0 {
		return time.Duration(a.SLAMinutes) * time.Minute
	}
	return 0
}

// escalate escalates every open ask past its SLA at now, recording each escalation (in one
// transaction with the check, so two ticks never escalate one ask twice) before telling the
// maintainer through the Engager.
func (r *Runner) escalate(ctx context.Context, now time.Time) ([]Escalation, error) {
	sla := r.sla()
	if sla == 0 {
		return nil, nil
	}
	ss, err := r.Store.List(ctx, store.ListOptions{})
	if err != nil {
		return nil, err
	}
	ms := r.maintainers()
	var out []Escalation
	for _, s := range ss {
		if s.Kind != "human" || s.Status.Ended() {
			continue
		}
		var e *Escalation
		err := r.Store.Tx(ctx, func(tx *store.Tx) error {
			e = nil
			cur, ok, err := tx.Get(s.ID)
			if err != nil || !ok || (cur.Status != ir.Running && cur.Status != ir.Paused) {
				return err // resolved or retracted meanwhile
			}
			n, last, _, err := escalationState(tx, cur)
			if err != nil || now.Sub(last) < sla {
				return err
			}
			k := n + 1
			e = &Escalation{Session: s.ID, Actor: s.Actor, To: ms[k%len(ms)], N: k, Waited: now.Sub(s.CreatedAt).Round(time.Minute)}
			if err := tx.SetMeta(escalationKey(s.ID), fmt.Sprintf("%d %d %s", k, now.UnixNano(), e.To)); err != nil {
				return err
			}
			return tx.Log(store.Event{Session: s.ID, Actor: s.Actor, Kind: "escalated",
				Message: fmt.Sprintf("escalation %d to %s: the ask has waited %s (sla_minutes %d)", k, e.To, e.Waited, int(sla/time.Minute))})
		})
		if err != nil {
			return out, err
		}
		if e == nil {
			continue
		}
		out = append(out, *e)
		if esc, ok := r.asks.engager.(Escalator); ok {
			if err := esc.Escalate(ctx, s, *e); err != nil {
				_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "escalate-failed", Message: err.Error()})
			}
		}
	}
	return out, nil
}

// escalationWake is the earlier of wake and when the next open ask comes due for escalation.
func (r *Runner) escalationWake(ctx context.Context, wake time.Time) time.Time {
	sla := r.sla()
	if sla == 0 {
		return wake
	}
	ss, err := r.Store.List(ctx, store.ListOptions{})
	if err != nil {
		return wake
	}
	soonest := r.opts.Now().Add(time.Minute) // an escalation that failed is retried, not spun on
	for _, s := range ss {
		if s.Kind != "human" {
			continue
		}
		_ = r.Store.Tx(ctx, func(tx *store.Tx) error {
			_, last, _, err := escalationState(tx, s)
			due := last.Add(sla)
			if due.Before(soonest) {
				due = soonest
			}
			if err == nil && due.Before(wake) {
				wake = due
			}
			return nil
		})
	}
	return wake
}

// Escalate rewrites the list, which names each ask's escalations.
func (a *AttentionFile) Escalate(ctx context.Context, _ store.Session, _ Escalation) error {
	return a.rewrite(ctx)
}

// escalationLine says, for the attention file, how often an ask was escalated and to whom last;
// "" when never.
func escalationLine(ctx context.Context, st *store.Store, s store.Session) string {
	var line string
	_ = st.Tx(ctx, func(tx *store.Tx) error {
		n, last, to, err := escalationState(tx, s)
		if err == nil && n > 0 {
			line = fmt.Sprintf("- escalated: %d time(s), last to %s at %s\n", n, to, last.Format("2006-01-02 15:04 UTC"))
		}
		return nil
	})
	return line
}
