package local

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
)

// refusedFleet has a codex skill and a script on the same hourly cron, and a person whose ask
// escalates after 30 minutes.
var refusedFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  writer:
    behavior: skills/writer
    triggers: [{ cron: "0 * * * *" }]
  job:
    behavior: scripts/job.sh
    triggers: [{ cron: "0 * * * *" }]
  approver:
    kind: human
    behavior: humans/approver.md
    triggers: [{ dispatch: true }]
policy:
  box:
    human: { sla_minutes: 30 }
    local: { maintainers: [alice, bob], agent: codex }
`,
	files: map[string]string{
		"skills/writer/SKILL.md": "# writer\nWrite.\n",
		"scripts/job.sh":         "#!/bin/sh\n" + scriptDone,
		"humans/approver.md":     "# Approve\n",
	},
}

// A tick whose environment cannot start one scheduled actor (here, no model key for its agent
// CLI) defers that actor's due trigger, saying why, and still fires the others and escalates
// the asks: it used to refuse the whole tick, so a crontab's runner tick, whose environment
// lacks the key, escalated nobody's ask. The tick reports the refusal as its error; the
// deferred trigger fires at the first tick that can start it.
func TestATickThatCannotStartOneActorDoesTheRest(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, refusedFleet, false)
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + t.TempDir(), LoginEnv + "="}
	c := &clock{}
	c.Set("2026-03-02T09:59:00Z")
	r := newRunner(t, dir, Options{Now: c.Now, Env: env})
	ctx := context.Background()
	t.Cleanup(func() { cancelRunning(t, r) })
	// Nothing is due at the first tick: an actor that could not start is no error yet (newc9: a
	// crontab's tick exited 1 every minute of a day nothing fired).
	if rep, err := r.Tick(ctx); err != nil || len(rep.Deferred) != 0 {
		t.Fatalf("the first tick: deferred %+v, %v", rep.Deferred, err)
	}
	if _, err := r.Launch(ctx, LaunchRequest{Actor: "approver"}); err != nil {
		t.Fatal(err)
	}
	c.Set("2026-03-02T10:30:00Z")
	rep, err := r.Tick(ctx)
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "writer's agent CLI would run with its own login") || !strings.Contains(err.Error(), "deferred until a tick can start them") {
		t.Errorf("the tick's error: %v", err)
	}
	if fired(rep) != "job" {
		t.Errorf("fired %q, want job", fired(rep))
	}
	if len(rep.Deferred) != 1 || rep.Deferred[0].Actor != "writer" || !strings.Contains(rep.Deferred[0].Reason, "no OPENAI_API_KEY") || rep.Deferred[0].Again {
		t.Errorf("deferred %+v, want writer's, for the key", rep.Deferred)
	}
	if escalations(rep) != "bob" {
		t.Errorf("escalated to %q, want bob", escalations(rep))
	}
	var out bytes.Buffer
	PrintTick(&out, rep)
	if !strings.Contains(out.String(), "fired job") || !strings.Contains(out.String(), "deferred writer#0: ") || !strings.Contains(out.String(), "escalated the ask") {
		t.Errorf("the report:\n%s", out.String())
	}
	settle(t, r, "approver")
	// With the key, the deferred trigger fires.
	keyed := newRunner(t, dir, Options{Now: c.Now, Env: append(env, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=http://127.0.0.1:9")})
	c.Set("2026-03-02T10:31:00Z")
	rep, err = keyed.Tick(ctx)
	if err != nil || fired(rep) != "writer" {
		t.Errorf("with the key: fired %q, %v", fired(rep), err)
	}
	cancelRunning(t, keyed)
	keyed.Wait()
	if evs, _ := r.Store.Events(ctx, "", 0); countKind(evs, "deferred") != 1 {
		t.Errorf("%d deferral events, want 1", countKind(evs, "deferred"))
	}
}

func countKind(evs []store.Event, kind string) int {
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// serve says what stays true from one tick to the next once (the fleet's pause, a trigger still
// deferred, a tick's refusal), not every minute, and says it again once it changed.
func TestServeSaysWhatStaysTrueOnce(t *testing.T) {
	var s serveSaid
	var out bytes.Buffer
	d := Deferral{Key: "a#0", Actor: "a", Reason: "at capacity"}
	for _, rep := range []TickReport{
		{Paused: "the fleet is paused", Deferred: []Deferral{d}},
		{Paused: "the fleet is paused", Deferred: []Deferral{{Key: "a#0", Actor: "a", Reason: "at capacity", Again: true}}},
		{Deferred: []Deferral{{Key: "a#0", Actor: "a", Reason: "no key", Again: true}}}, // another reason: said
		{},
		{Paused: "the fleet is paused"},
	} {
		PrintTick(&out, s.news(rep))
		s.say(&out, &s.tick, "autonomy: tick failed: no key")
	}
	s.tick = ""
	s.say(&out, &s.tick, "autonomy: tick failed: no key")
	got := out.String()
	if n := strings.Count(got, "paused: the fleet is paused"); n != 2 {
		t.Errorf("the pause said %d times, want 2 (once, then again after the resume):\n%s", n, got)
	}
	if n := strings.Count(got, "deferred a#0: at capacity"); n != 1 {
		t.Errorf("the deferral said %d times, want 1:\n%s", n, got)
	}
	if n := strings.Count(got, "deferred a#0: no key"); n != 1 {
		t.Errorf("the deferral's new reason said %d times, want 1:\n%s", n, got)
	}
	if n := strings.Count(got, "tick failed: no key"); n != 2 {
		t.Errorf("the refusal said %d times, want 2 (once, then again once a tick succeeded):\n%s", n, got)
	}
}

// NextFiring is what serve's banner names: the schedule's soonest firing, in its timezone, and
// its actor.
func TestNextFiringIsTheSchedulesSoonest(t *testing.T) {
	t.Parallel()
	r := newRunner(t, installFleet(t, cronFleet, false), Options{})
	for _, c := range []struct{ now, actor, at string }{
		{"2026-03-02T07:50:00Z", "hourly", "2026-03-02 09:00 CET"}, // 08:50 Paris: three due at 09:00, the schedule's first named
		{"2026-03-02T08:20:00Z", "paris9", "2026-03-02 09:30 CET"}, // paris9 and slow at 09:30
		{"2026-03-02T08:31:00Z", "slow", "2026-03-02 09:45 CET"},
	} {
		now, _ := time.Parse(time.RFC3339, c.now)
		actor, at, ok := r.NextFiring(now)
		if !ok || actor != c.actor || at.Format("2006-01-02 15:04 MST") != c.at {
			t.Errorf("at %s: %s at %s (%v), want %s at %s", c.now, actor, at.Format("2006-01-02 15:04 MST"), ok, c.actor, c.at)
		}
	}
	if _, _, ok := newRunner(t, installFleet(t, editedFleet, false), Options{}).NextFiring(time.Now()); !ok {
		t.Error("a scheduled fleet has no next firing")
	}
}

// A second runner serve of one installation is told of the first (newc8 started two, each
// silent about the other); once the first stops, the next serves alone.
func TestASecondServeIsToldOfTheFirst(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, cronFleet, false)
	first, second := newRunner(t, dir, Options{}), newRunner(t, dir, Options{})
	free, alone := first.HoldServe()
	if !alone {
		t.Fatal("the first serve is not alone")
	}
	if free2, alone := second.HoldServe(); alone {
		free2()
		t.Fatal("the second serve was not told of the first")
	}
	free()
	free3, alone := second.HoldServe()
	defer free3()
	if !alone {
		t.Error("a serve after the first stopped is not alone")
	}
}

// A deferred trigger whose entry a recompile removed is forgotten at the next tick, not kept
// pending for ever.
func TestATickForgetsADeferredTriggerNoLongerScheduled(t *testing.T) {
	t.Parallel()
	c := &clock{}
	c.Set("2026-03-02T06:59:00Z")
	r := newRunner(t, installFleet(t, cronFleet, false), Options{Now: c.Now})
	ctx := context.Background()
	t.Cleanup(func() { cancelRunning(t, r) })
	if _, err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.SetPending("removed#0", c.Now()); err != nil {
			return err
		}
		return tx.SetPending("hourly#0", c.Now())
	}); err != nil {
		t.Fatal(err)
	}
	c.Set("2026-03-02T06:59:30Z")
	if _, err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	var pending map[string]time.Time
	if err := r.Store.Tx(ctx, func(tx *store.Tx) (err error) { pending, err = tx.Pending(); return err }); err != nil {
		t.Fatal(err)
	}
	if _, ok := pending["removed#0"]; ok {
		t.Errorf("the removed entry is still pending: %v", pending)
	}
}

// While the fleet is paused, an actor that cannot start is not said to have "nothing due": the
// pause is what the tick reports (attack28).
func TestAPausedTickNamesNoUnreadyActor(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, refusedFleet, false)
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), LoginEnv + "="}
	c := &clock{}
	c.Set("2026-03-02T09:59:00Z")
	r := newRunner(t, dir, Options{Now: c.Now, Env: env})
	ctx := context.Background()
	t.Cleanup(func() { cancelRunning(t, r) })
	if rep, err := r.Tick(ctx); err != nil || len(rep.Unready) != 1 || rep.Unready[0].Actor != "writer" {
		t.Fatalf("the first tick: unready %+v, %v", rep.Unready, err)
	}
	if _, err := r.Pause(ctx, "", "a trial"); err != nil {
		t.Fatal(err)
	}
	c.Set("2026-03-02T10:00:00Z")
	rep, err := r.Tick(ctx)
	if err != nil || rep.Paused == "" || len(rep.Unready) != 0 {
		t.Errorf("paused: %q, unready %+v, %v", rep.Paused, rep.Unready, err)
	}
}
