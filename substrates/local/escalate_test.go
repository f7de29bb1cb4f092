package local

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/ir"
)

var slaFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  approver:
    kind: human
    behavior: humans/approver.md
    triggers: [{ dispatch: true }]
policy:
  box:
    human: { sla_minutes: 30 }
    local: { maintainers: [alice, bob, carol] }
`,
	files: map[string]string{"humans/approver.md": "# Approve or decline\n"},
}

func escalations(rep TickReport) string {
	var out []string
	for _, e := range rep.Escalated {
		out = append(out, e.To)
	}
	return strings.Join(out, ",")
}

// TestTickEscalatesOpenAsks: on a fake clock, an open ask is escalated once its SLA has passed
// since its last notice, to the next maintainer in turn (the first escalation to the second),
// once however many ticks run, and never after it is resolved.
func TestTickEscalatesOpenAsks(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, slaFleet, false)
	c := &clock{}
	c.Set("2026-03-02T10:00:00Z")
	r := newRunner(t, dir, Options{Now: c.Now})
	ctx := context.Background()
	res, err := r.Launch(ctx, LaunchRequest{Actor: "approver"})
	if err != nil {
		t.Fatal(err)
	}
	tick := func(at, want string) {
		t.Helper()
		c.Set(at)
		rep, err := r.Tick(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := escalations(rep); got != want {
			t.Fatalf("tick at %s escalated to %q, want %q", at, got, want)
		}
	}
	tick("2026-03-02T10:29:59Z", "")
	tick("2026-03-02T10:30:00Z", "bob")
	tick("2026-03-02T10:31:00Z", "")
	tick("2026-03-02T10:59:59Z", "")
	tick("2026-03-02T11:00:00Z", "carol")
	tick("2026-03-02T11:45:00Z", "alice")
	attention := readFile(t, filepath.Join(dir, StateDir, "attention.md"))
	if !strings.Contains(attention, "- escalated: 3 time(s), last to alice at 2026-03-02 11:45 UTC") {
		t.Errorf("attention.md does not list the escalations:\n%s", attention)
	}
	if wake := r.escalationWake(ctx, c.Now().Add(time.Hour)); !wake.Equal(c.Now().Add(30 * time.Minute)) {
		t.Errorf("serve would wake at %s, want the next escalation at %s", wake, c.Now().Add(30*time.Minute))
	}
	if _, err := r.Update(ctx, res.Session.ID, ir.Patch{Status: ir.Done, Token: res.Token, Evidence: "approved in the meeting"}); err != nil {
		t.Fatal(err)
	}
	tick("2026-03-02T13:00:00Z", "")
	if wake := r.escalationWake(ctx, c.Now().Add(time.Hour)); !wake.Equal(c.Now().Add(time.Hour)) {
		t.Errorf("serve would wake at %s for a resolved ask, want %s", wake, c.Now().Add(time.Hour))
	}
}

// TestConcurrentTicksEscalateOnce: ticks of several processes at once escalate an ask once.
func TestConcurrentTicksEscalateOnce(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, slaFleet, false)
	c := &clock{}
	c.Set("2026-03-02T10:00:00Z")
	ctx := context.Background()
	if _, err := newRunner(t, dir, Options{Now: c.Now}).Launch(ctx, LaunchRequest{Actor: "approver"}); err != nil {
		t.Fatal(err)
	}
	c.Set("2026-03-02T10:40:00Z")
	const n = 6
	got := make(chan int, n)
	for range n {
		r := newRunner(t, dir, Options{Now: c.Now})
		go func() {
			rep, err := r.Tick(ctx)
			if err != nil {
				t.Error(err)
			}
			got <- len(rep.Escalated)
		}()
	}
	total := 0
	for range n {
		total += <-got
	}
	if total != 1 {
		t.Errorf("%d escalations from %d concurrent ticks, want 1", total, n)
	}
}

// TestPausedFleetEscalatesNothing: while the fleet is paused an overdue ask is not escalated,
// as the control workflow's sweep is skipped while AUTONOMY_PAUSED is true; after the resume it
// escalates once.
func TestPausedFleetEscalatesNothing(t *testing.T) {
	t.Parallel()
	c := &clock{}
	c.Set("2026-03-02T10:00:00Z")
	r := newRunner(t, installFleet(t, slaFleet, false), Options{Now: c.Now})
	ctx := context.Background()
	if _, err := r.Launch(ctx, LaunchRequest{Actor: "approver"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Pause(ctx, "", "freeze"); err != nil {
		t.Fatal(err)
	}
	for _, at := range []string{"2026-03-02T10:30:00Z", "2026-03-02T11:30:00Z"} {
		c.Set(at)
		if rep, err := r.Tick(ctx); err != nil || len(rep.Escalated) > 0 {
			t.Fatalf("paused tick at %s escalated %q (%v)", at, escalations(rep), err)
		}
	}
	if _, err := r.Resume(ctx, ""); err != nil {
		t.Fatal(err)
	}
	c.Set("2026-03-02T11:31:00Z")
	if rep, err := r.Tick(ctx); err != nil || escalations(rep) != "bob" {
		t.Fatalf("the tick after the resume escalated %q (%v), want bob once", escalations(rep), err)
	}
}
