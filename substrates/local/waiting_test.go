//go:build unix

package local

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/autonomyhq/autonomy/internal/handoff"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// TestWaitingForAPerson: runner list's WAITING FOR names, for every open ask to a person, whom and
// what, on one clipped line: the launch's text under the param the actor forwards it as
// (hello-human's approver's ASK), a typed ask's question, the subject when there is nothing else;
// an agent waiting for no one shows nothing, and neither does a resolved ask.
func TestWaitingForAPerson(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	seam := newRunner(t, installFleet(t, seamFleet, false), Options{})
	asked, err := seam.Launch(ctx, LaunchRequest{Actor: "approver", Ref: "7", Text: "Approve or decline: a new\nbudget line"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := seam.WaitingFor(ctx, asked.Session), "approver (a person): Approve or decline: a new budget line"; got != want {
		t.Errorf("hello-human's ask: WAITING FOR %q, want %q", got, want)
	}
	long, err := seam.Launch(ctx, LaunchRequest{Actor: "approver", Ref: "8", Text: strings.Repeat("é", 300)})
	if err != nil {
		t.Fatal(err)
	}
	if got := seam.WaitingFor(ctx, long.Session); utf8.RuneCountInString(got) != maxWaiting || !strings.HasSuffix(got, "é…") {
		t.Errorf("a long ask: WAITING FOR %q, want it clipped to %d characters", got, maxWaiting)
	}
	bare, err := seam.Launch(ctx, LaunchRequest{Actor: "approver", Ref: "9"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := seam.WaitingFor(ctx, bare.Session), "approver (a person): an answer on 9 (runner get "+bare.Session.ID+")"; got != want {
		t.Errorf("an ask with no text: WAITING FOR %q, want %q", got, want)
	}
	resolved, err := seam.Update(ctx, bare.Session.ID, ir.Patch{Status: ir.Done, Token: bare.Token, Evidence: "answered"})
	if err != nil {
		t.Fatal(err)
	}
	if got := seam.WaitingFor(ctx, resolved); got != "" {
		t.Errorf("a resolved ask: WAITING FOR %q", got)
	}
	if got := seam.WaitingFor(ctx, store.Session{Kind: "agent", Status: "running"}); got != "" {
		t.Errorf("a running agent: WAITING FOR %q", got)
	}

	typed := newRunner(t, installFleet(t, typedFleet, false), Options{})
	res, err := typed.Launch(ctx, LaunchRequest{Actor: "maintainer", Handoff: &handoff.Spec{Type: handoff.Decide, In: "two designs fit", Decision: &handoff.Decision{Question: "which?", Options: []string{"A", "B"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := typed.WaitingFor(ctx, res.Session), "maintainer (a person): decide: which?"; got != want {
		t.Errorf("a typed ask: WAITING FOR %q, want %q", got, want)
	}
}

// TestCodeFlowAskSaysWhatItWaitsFor: the maintainer's ask the code flow engages for a proposal
// shows in runner list whom and what (approve merging proposal N), and its engaged event names
// its origin, the code flow for that proposal, not the operator.
func TestCodeFlowAskSaysWhatItWaitsFor(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	p := g.awaitingMaintainer()
	ctx := context.Background()
	ask, _, _ := g.r.Store.Get(ctx, p.Ask)
	if got, want := g.r.WaitingFor(ctx, ask), fmt.Sprintf("maintainer (a person): approve merging proposal %d of develop into main", p.Seq); !strings.HasPrefix(got, want) {
		t.Errorf("WAITING FOR %q, want it to start %q", got, want)
	}
	events, err := g.r.Store.Events(ctx, p.Ask, 0)
	if err != nil {
		t.Fatal(err)
	}
	var engaged string
	for _, e := range events {
		if e.Kind == "engaged" {
			engaged = e.Message
		}
	}
	if want := fmt.Sprintf("ask engaged by the code flow for proposal %d (origin proposal:%d)", p.Seq, p.Seq); engaged != want {
		t.Errorf("engaged event %q, want %q", engaged, want)
	}
}
