package local

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
)

// The throttles: a pause of the whole fleet (runner pause), the kill switch, and a pause of one
// work item (runner pause --item REF). While the fleet is paused, launch refuses, tick and serve
// fire nothing (a cron slot that comes due meanwhile is skipped, not kept for later), and the
// code flow launches no reviewer and merges nothing; a paused item's sessions (subject.ref REF)
// are refused the same way. Sessions already running are left to end as they would: pausing
// stops new work, it does not kill work under way (runner cancel does). Both are recorded in
// the store, so they hold across processes and restarts until runner resume.

// installPausedKey marks, in the store's meta table, that the installation's installPaused has
// been applied: the fleet is paused once, when the runner first opens the store, and a resume
// then sticks.
const installPausedKey = "throttle.installPaused"

// Pause pauses the fleet (item "") or the work item item, saying why. Only the operator may.
func (r *Runner) Pause(ctx context.Context, item, reason string) (store.Throttle, error) {
	if err := r.caller.operatorOnly(ctx, "pause"); err != nil {
		return store.Throttle{}, err
	}
	t := store.Throttle{Scope: ThrottleScope(item), Reason: strings.TrimSpace(reason), By: userName(), At: r.opts.Now().UTC()}
	if err := r.Store.SetThrottle(ctx, t); err != nil {
		return t, err
	}
	_ = r.Store.Log(ctx, store.Event{Kind: "paused", Message: describeThrottle(t)})
	return t, nil
}

// Resume lifts the pause of the fleet (item "") or of the work item item; it says whether one
// stood. Only the operator may.
func (r *Runner) Resume(ctx context.Context, item string) (bool, error) {
	if err := r.caller.operatorOnly(ctx, "resume"); err != nil {
		return false, err
	}
	scope := ThrottleScope(item)
	ok, err := r.Store.ClearThrottle(ctx, scope)
	if err == nil && ok {
		_ = r.Store.Log(ctx, store.Event{Kind: "resumed", Message: scope + " resumed by " + userName()})
	}
	return ok, err
}

// Throttles lists the pauses in force.
func (r *Runner) Throttles(ctx context.Context) ([]store.Throttle, error) {
	return r.Store.Throttles(ctx)
}

// ThrottleScope is the scope a pause of item ("" for the fleet) stands in: store.FleetScope, or
// store.ItemScope of the item in its one spelling (itemRef).
func ThrottleScope(item string) string {
	if item == "" {
		return store.FleetScope
	}
	return store.ItemScope(itemRef(item))
}

// itemRef is the one spelling of work item ref: without a leading '#', and a number in decimal
// with no sign or leading zero (#42, +42, 042 and 42 are all 42), so that an item has one pause,
// one branch and one pull request however a launch spells it. Another ref is as given.
func itemRef(ref string) string {
	ref = strings.TrimPrefix(ref, "#")
	if n, err := strconv.Atoi(ref); err == nil && n > 0 {
		return strconv.Itoa(n)
	}
	return ref
}

// describeThrottle says what a pause holds, since when, by whom and why.
func describeThrottle(t store.Throttle) string {
	what := "the fleet is paused"
	if ref, ok := strings.CutPrefix(t.Scope, "item:"); ok {
		what = fmt.Sprintf("work item %q is paused", ref)
	}
	msg := fmt.Sprintf("%s since %s", what, t.At.UTC().Format(time.RFC3339))
	if t.By != "" {
		msg += " by " + t.By
	}
	if t.Reason != "" {
		msg += " (" + t.Reason + ")"
	}
	return msg
}

// resumeHint is the command that lifts a pause.
func resumeHint(t store.Throttle) string {
	if ref, ok := strings.CutPrefix(t.Scope, "item:"); ok {
		return "autonomy runner resume --item " + shellWord(ref)
	}
	return "autonomy runner resume"
}

// shellWord quotes w for a command line shown to a person, when it needs it.
func shellWord(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/:-") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// held is why, inside tx, a session on the work item ref may not start now ("" when it may):
// the fleet's pause, then the item's.
func held(tx *store.Tx, ref string) (string, error) {
	scopes := []string{store.FleetScope}
	if ref != "" {
		scopes = append(scopes, store.ItemScope(itemRef(ref)))
	}
	for _, scope := range scopes {
		t, ok, err := tx.Throttle(scope)
		if err != nil {
			return "", err
		}
		if ok {
			return fmt.Sprintf("%s: nothing starts until %s", describeThrottle(t), resumeHint(t)), nil
		}
	}
	return "", nil
}

// applyInstallPaused pauses the fleet the first time the store of an installation compiled with
// policy.box.local.installPaused is opened.
func (r *Runner) applyInstallPaused(ctx context.Context) error {
	if !r.In.Runner.InstallPaused {
		return nil
	}
	return r.Store.Tx(ctx, func(tx *store.Tx) error {
		if _, done, err := tx.Meta(installPausedKey); err != nil || done {
			return err
		}
		t := store.Throttle{Scope: store.FleetScope, Reason: "installed paused (policy.box.local.installPaused)", By: "compile", At: r.opts.Now().UTC()}
		if err := tx.SetThrottle(t); err != nil {
			return err
		}
		if err := tx.Log(store.Event{Kind: "paused", Message: describeThrottle(t)}); err != nil {
			return err
		}
		return tx.SetMeta(installPausedKey, t.At.Format(time.RFC3339))
	})
}

// skipWhilePaused is, inside a tick's transaction, why the tick fires nothing ("" when the fleet
// is not paused). A paused tick still moves the schedule's mark to now, so the cron slots that
// came due while paused are skipped, not fired together at the resume, and the triggers deferred
// before stay deferred.
func skipWhilePaused(tx *store.Tx, now time.Time) (string, error) {
	reason, err := held(tx, "")
	if err != nil || reason == "" {
		return "", err
	}
	raw, ok, err := tx.Meta(lastTickKey)
	if err != nil {
		return "", err
	}
	if ok {
		if n, perr := strconv.ParseInt(raw, 10, 64); perr == nil && n >= now.UnixNano() {
			return reason, nil // the clock went back: keep the later mark
		}
	}
	return reason, tx.SetMeta(lastTickKey, strconv.FormatInt(now.UnixNano(), 10))
}
