package local

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/handoff"
	"github.com/autonomyhq/autonomy/ir"
)

var typedFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  maintainer:
    kind: human
    behavior: humans/maintainer.md
    triggers: [{ dispatch: true }]
  worker:
    behavior: scripts/wait.sh
    triggers: [{ dispatch: true }]
policy:
  maxConcurrent: 1
`,
	files: map[string]string{"humans/maintainer.md": "# Decide\n", "scripts/wait.sh": "#!/bin/sh\nsleep 30\n" + scriptDone},
}

func refused(t *testing.T, err error, want string) {
	t.Helper()
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want a refusal saying %q", err, want)
	}
}

// TestTypedDecision: a decide ask records its payload; a resolution off its options, or with a
// wrong token, changes nothing; the right one records the choice, the out handed back and who
// made it (the runner's verified caller), with the receipt confirmed.
func TestTypedDecision(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, typedFleet, false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	spec := &handoff.Spec{Type: handoff.Decide, In: "two designs fit", Decision: &handoff.Decision{Question: "which?", Options: []string{"A", "B"}}, Out: "why"}
	res, err := r.Launch(ctx, LaunchRequest{Actor: "maintainer", Handoff: spec})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID
	_, err = r.Update(ctx, id, ir.Patch{Status: ir.Done, Token: res.Token, Evidence: "x", Choice: "C"})
	refused(t, err, "needs a choice, one of: A, B")
	_, err = r.Update(ctx, id, ir.Patch{Status: ir.Done, Token: "atk_wrong", Evidence: "x", Choice: "B"})
	refused(t, err, "does not redeem")
	// and says where the token is: what its launch printed, or the file for an ask a session made.
	refused(t, err, "its launch printed, or, for an ask a session made, the one in .autonomy/state/asks/"+id+".token")
	// The token file's path given for the token: the refusal says to give its content.
	_, err = r.Update(ctx, id, ir.Patch{Status: ir.Done, Token: ".autonomy/state/asks/" + id + ".token", Evidence: "x", Choice: "B"})
	refused(t, err, `--token takes the token itself, not the file that holds it: --token "$(cat .autonomy/state/asks/`+id+`.token)"`)
	if s, _, _ := r.Get(ctx, id); s.Status != ir.Running {
		t.Fatalf("a refused resolution changed the ask: %s", s.Status)
	}
	if _, err := r.Update(ctx, id, ir.Patch{Status: ir.Done, Token: res.Token, Evidence: "B needs no migration", Choice: "B", Answer: "cheaper"}); err != nil {
		t.Fatal(err)
	}
	rec, err := r.Handoff(ctx, id)
	if err != nil || rec == nil {
		t.Fatal(rec, err)
	}
	if rec.Type != handoff.Decide || rec.In != "two designs fit" || rec.Choice != "B" || rec.Answer != "cheaper" {
		t.Fatalf("record %+v", rec)
	}
	if rec.By != "the operator" || rec.ConfirmedBy != "the operator" || rec.At.IsZero() || rec.ConfirmedAt.IsZero() {
		t.Fatalf("who decided and confirmed: %+v", rec)
	}
}

// TestTypedAskRefusals: a handoff on an agent's launch, or one that is not valid, is refused
// and nothing is recorded; an untyped ask takes no choice.
func TestTypedAskRefusals(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, typedFleet, false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	_, err := r.Launch(ctx, LaunchRequest{Actor: "worker", Handoff: &handoff.Spec{Type: handoff.Inform}})
	refused(t, err, "is an agent")
	_, err = r.Launch(ctx, LaunchRequest{Actor: "maintainer", Handoff: &handoff.Spec{Type: handoff.Decide}})
	refused(t, err, "needs two or more decision options")
	if ss, _ := r.List(ctx, true); len(ss) != 0 {
		t.Fatalf("a refused launch recorded %d sessions", len(ss))
	}
	res, err := r.Launch(ctx, LaunchRequest{Actor: "maintainer"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Update(ctx, res.Session.ID, ir.Patch{Status: ir.Done, Token: res.Token, Evidence: "x", Choice: "approve"})
	refused(t, err, "has no type")
	if _, err := r.Update(ctx, res.Session.ID, ir.Patch{Status: ir.Done, Token: res.Token, Evidence: "merged"}); err != nil {
		t.Fatalf("an untyped ask resolves as before: %v", err)
	}
	if rec, err := r.Handoff(ctx, res.Session.ID); rec != nil || err != nil {
		t.Fatalf("an untyped ask has a handoff: %+v %v", rec, err)
	}
}

// TestInformIsNotWork: with maxConcurrent 1 taken by a running agent, an inform ask is still
// engaged (it holds no capacity), its receipt is confirmed with its token, and it is closed by
// that confirmation alone (no evidence, no choice); an approval's choice follows its status.
func TestInformIsNotWork(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, typedFleet, false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	w, err := r.Launch(ctx, LaunchRequest{Actor: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = r.Cancel(context.Background(), w.Session.ID) })
	_, err = r.Launch(ctx, LaunchRequest{Actor: "worker"})
	refused(t, err, "at capacity")
	inf, err := r.Launch(ctx, LaunchRequest{Actor: "maintainer", Handoff: &handoff.Spec{Type: handoff.Inform, In: "v2 is deployed"}})
	if err != nil {
		t.Fatalf("an inform at capacity: %v", err)
	}
	if _, err := r.Confirm(ctx, inf.Session.ID, "atk_wrong"); err == nil {
		t.Fatal("a wrong token confirmed an inform")
	}
	rec, err := r.Confirm(ctx, inf.Session.ID, inf.Token)
	if err != nil || rec.ConfirmedBy != "the operator" {
		t.Fatal(rec, err)
	}
	_, err = r.Update(ctx, inf.Session.ID, ir.Patch{Status: ir.Failed, Token: inf.Token})
	refused(t, err, "only confirmed")
	s, err := r.Update(ctx, inf.Session.ID, ir.Patch{Status: ir.Done, Token: inf.Token})
	if err != nil || s.Status != ir.Done {
		t.Fatal(s.Status, err)
	}
	ap, err := r.Launch(ctx, LaunchRequest{Actor: "maintainer", Handoff: &handoff.Spec{Type: handoff.Approve, In: "merge #5?"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Update(ctx, ap.Session.ID, ir.Patch{Status: ir.Done, Token: ap.Token, Evidence: "x", Choice: "reject"})
	refused(t, err, "disagrees")
	if _, err := r.Update(ctx, ap.Session.ID, ir.Patch{Status: ir.Failed, Token: ap.Token, Evidence: "breaks the API"}); err != nil {
		t.Fatal(err)
	}
	if rec, _ := r.Handoff(ctx, ap.Session.ID); rec.Choice != "reject" {
		t.Fatalf("an approval failed recorded choice %q", rec.Choice)
	}
}
