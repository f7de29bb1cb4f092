package local

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
)

var throttleFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  hourly:
    behavior: scripts/quick.sh
    triggers: [{ cron: "0 * * * *" }]
  w:
    behavior: scripts/quick.sh
    triggers: [{ dispatch: true, params: { ITEM: subject.ref } }]
`,
	files: map[string]string{"scripts/quick.sh": "#!/bin/sh\n" + scriptDone},
}

// The fleet's pause holds launch and tick until resume; the slots that came due meanwhile are
// skipped, not fired at the resume.
func TestFleetPause(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, throttleFleet, false)
	c := &clock{}
	r := newRunner(t, dir, Options{Now: c.Now})
	ctx := context.Background()
	c.Set("2026-03-02T06:59:00Z")
	if _, err := r.Tick(ctx); err != nil { // the first tick starts the schedule
		t.Fatal(err)
	}
	if _, err := r.Pause(ctx, "", "the bill spiked"); err != nil {
		t.Fatal(err)
	}
	var refused *RefusedError
	_, err := r.Launch(ctx, LaunchRequest{Actor: "w"})
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "the fleet is paused") ||
		!strings.Contains(err.Error(), "the bill spiked") || !strings.Contains(err.Error(), "autonomy runner resume") {
		t.Fatalf("launch while paused: %v", err)
	}
	if ss, _ := r.Store.List(ctx, store.ListOptions{All: true}); len(ss) != 0 {
		t.Fatalf("a paused launch recorded a session: %+v", ss)
	}
	c.Set("2026-03-02T09:00:00Z") // two slots came due
	rep, err := r.Tick(ctx)
	if err != nil || len(rep.Fired) != 0 || !strings.Contains(rep.Paused, "the fleet is paused") {
		t.Fatalf("tick while paused: %+v %v", rep, err)
	}
	// A session may not pause or resume the fleet.
	in := inSession(t, dir, r, "w")
	var denied *DeniedError
	if _, err := in.Resume(ctx, ""); !errors.As(err, &denied) {
		t.Fatalf("a session resumed the fleet: %v", err)
	}
	if ok, err := r.Resume(ctx, ""); !ok || err != nil {
		t.Fatalf("resume: %v %v", ok, err)
	}
	c.Set("2026-03-02T09:00:30Z")
	if rep, err = r.Tick(ctx); err != nil || len(rep.Fired) != 0 || rep.Paused != "" {
		t.Fatalf("the slots skipped while paused fired at the resume: %+v %v", rep, err)
	}
	c.Set("2026-03-02T10:00:00Z")
	if rep, err = r.Tick(ctx); err != nil || fired(rep) != "hourly" {
		t.Fatalf("after the resume: %+v %v", rep, err)
	}
	waitEnded(t, r, rep.Fired[0].ID)
	waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "w"}).ID)
}

// A work item's pause holds only the sessions of that item, however a launch spells its number.
func TestItemPause(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, throttleFleet, false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	if _, err := r.Pause(ctx, "42", ""); err != nil {
		t.Fatal(err)
	}
	var refused *RefusedError
	if _, err := r.Launch(ctx, LaunchRequest{Actor: "w", Ref: "42"}); !errors.As(err, &refused) ||
		!strings.Contains(err.Error(), `work item "42" is paused`) || !strings.Contains(err.Error(), "autonomy runner resume --item 42") {
		t.Fatalf("launch on a paused item: %v", err)
	}
	for _, ref := range []string{"#42", "+42", "042"} { // other spellings of 42 are 42
		if _, err := r.Launch(ctx, LaunchRequest{Actor: "w", Ref: ref}); !errors.As(err, &refused) || !strings.Contains(err.Error(), `work item "42" is paused`) {
			t.Errorf("launch on %q while 42 is paused: %v", ref, err)
		}
	}
	waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "w", Ref: "43"}).ID)
	if ok, err := r.Resume(ctx, "#042"); !ok || err != nil {
		t.Fatalf("resume: %v %v", ok, err)
	}
	waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "w", Ref: "42"}).ID)
}

// An installation compiled with installPaused starts paused, once: a resume sticks.
func TestInstallPaused(t *testing.T) {
	t.Parallel()
	f := throttleFleet
	f.yml += "policy:\n  box:\n    local: { installPaused: true }\n"
	dir := installFleet(t, f, false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	var refused *RefusedError
	if _, err := r.Launch(ctx, LaunchRequest{Actor: "w"}); !errors.As(err, &refused) || !strings.Contains(err.Error(), "installed paused") {
		t.Fatalf("launch on an installation installed paused: %v", err)
	}
	if ok, err := r.Resume(ctx, ""); !ok || err != nil {
		t.Fatalf("resume: %v %v", ok, err)
	}
	again := newRunner(t, dir, Options{})
	waitEnded(t, again, launch(t, again, LaunchRequest{Actor: "w"}).ID)
}
