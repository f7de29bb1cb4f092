package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/handoff"
	"github.com/autonomyhq/autonomy/ir"
)

func writeFixtures(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "humans.yml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestParseFixturesRefuses: a bad fixtures file is refused at FILE:LINE:COL with the fix.
func TestParseFixturesRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ yml, want string }{
		{"- a\n", ":1:1: a fixtures file maps each human actor"},
		{"approver: yes\n", ":1:11: approver: a list of rules"},
		{"approver:\n  - { choose: approve, after: soon }\n", ":2:31: after \"soon\" is not a duration"},
		{"approver:\n  - { type: shout }\n", `:2:13: type "shout"`},
		{"approver:\n  - { choose: approve, wait: 1m }\n", `:2:24: unknown key "wait"`},
		{"approver:\n  - { never: true, choose: approve }\n", ":2:5: a never rule answers nothing"},
		{"approver: [\n", "humans.yml: yaml:"},
		{"approver:\n  - { reply: " + strings.Repeat("x", 4097) + " }\n", "reply is 4097 bytes; at most 4096"},
	} {
		_, err := ParseFixtures(writeFixtures(t, c.yml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yml, err, c.want)
		}
	}
	if _, err := ParseFixtures(writeFixtures(t, strings.Repeat("#", MaxFixturesBytes+1))); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a huge fixtures file: %v", err)
	}
}

// TestHumanSimulator: on a fake clock, the simulator answers an approval once its delay has
// passed on the runner's clock (not before), through the redeem of the ask's token, recorded as
// the simulator's; a decide gets the option the fixture chooses; a "never" leaves the consult
// open, and it is escalated past its SLA. An actor that is not a person is refused.
func TestHumanSimulator(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, slaFleet, false)
	c := &clock{}
	c.Set("2026-03-02T10:00:00Z")
	r := newRunner(t, dir, Options{Now: c.Now})
	ctx := context.Background()
	bad, err := ParseFixtures(writeFixtures(t, "nobody:\n  - { choose: approve }\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetHumans(ctx, bad); err == nil || !strings.Contains(err.Error(), `"nobody" is not a human actor`) {
		t.Fatalf("fixtures of a non-person: %v", err)
	}
	fx, err := ParseFixtures(writeFixtures(t, `approver:
  - { type: approve, choose: approve, after: 20m }
  - { type: decide, choose: B, reply: smaller, after: 5m }
  - { type: consult, never: true }
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetHumans(ctx, fx); err != nil {
		t.Fatal(err)
	}
	ap, err := r.Launch(ctx, LaunchRequest{Actor: "approver", Handoff: &handoff.Spec{Type: handoff.Approve, In: "ship v2?"}})
	if err != nil {
		t.Fatal(err)
	}
	de, err := r.Launch(ctx, LaunchRequest{Actor: "approver", Handoff: &handoff.Spec{Type: handoff.Decide, Decision: &handoff.Decision{Options: []string{"A", "B"}}}})
	if err != nil {
		t.Fatal(err)
	}
	co, err := r.Launch(ctx, LaunchRequest{Actor: "approver", Handoff: &handoff.Spec{Type: handoff.Consult, In: "which database?"}})
	if err != nil {
		t.Fatal(err)
	}
	status := func(id string) ir.SessionStatus {
		s, _, _ := r.Get(ctx, id)
		return s.Status
	}
	c.Set("2026-03-02T10:10:00Z")
	rep, err := r.Tick(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if status(ap.Session.ID) != ir.Running || status(de.Session.ID) != ir.Done || len(rep.Simulated) != 1 {
		t.Fatalf("at +10m: approval %s, decision %s, answered %v", status(ap.Session.ID), status(de.Session.ID), rep.Simulated)
	}
	if rec, _ := r.Handoff(ctx, de.Session.ID); rec.Choice != "B" || rec.Answer != "smaller" || !strings.HasPrefix(rec.By, "simulator of approver (") {
		t.Fatalf("the decision: %+v", rec)
	}
	c.Set("2026-03-02T10:21:00Z")
	if _, err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	s, _, _ := r.Get(ctx, ap.Session.ID)
	if s.Status != ir.Done || !strings.Contains(s.Verified, "redeem token") || !strings.HasPrefix(s.ResolvedBy, "simulator of approver") {
		t.Fatalf("the approval at +21m: %+v", s)
	}
	c.Set("2026-03-02T10:31:00Z")
	rep, err = r.Tick(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if status(co.Session.ID) != ir.Running || len(rep.Escalated) != 1 || rep.Escalated[0].Session != co.Session.ID {
		t.Fatalf("the never-answered consult at +31m: %s, escalated %+v", status(co.Session.ID), rep.Escalated)
	}
	if err := r.SetHumans(ctx, nil); err != nil {
		t.Fatal(err)
	}
	un, err := r.Launch(ctx, LaunchRequest{Actor: "approver", Handoff: &handoff.Spec{Type: handoff.Decide, Decision: &handoff.Decision{Options: []string{"A", "B"}}}})
	if err != nil {
		t.Fatal(err)
	}
	c.Set("2026-03-02T12:00:00Z")
	if _, err := r.Tick(ctx); err != nil || status(un.Session.ID) != ir.Running {
		t.Fatalf("an ask after the simulator was cleared: %s %v", status(un.Session.ID), err)
	}
}
