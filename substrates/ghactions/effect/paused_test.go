package effect

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// refusedPaused fails t unless err is the refusal of a paused item n.
func refusedPaused(t *testing.T, what string, err error, n int) {
	t.Helper()
	var r *Refused
	if !errors.As(err, &r) || !strings.Contains(r.Reason, "#"+strconv.Itoa(n)+" is paused") {
		t.Errorf("%s on paused #%d: %v, want its refusal", what, n, err)
	}
}

// TestPausedItemProposeAndReview: a work item carrying the pause label (in any case) gets no
// proposal (no branch, no pull request, no comment); a paused pull request gets no update of its
// branch and no agent-review status; policy.box.gh-actions.paused_label names another label.
func TestPausedItemProposeAndReview(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if err := w.fake.Label(w.item, "ada", "Autonomy:Paused"); err != nil {
		t.Fatal(err)
	}
	_, err := Propose(ctx, w.env("develop"), w.agentBundle(map[string]string{"src/a.go": "package a\n\nfunc A() {}\n"}))
	refusedPaused(t, "propose", err, w.item)
	if b := w.branch("autonomy/develop/1"); b != "" || len(w.fake.Pulls()) != 0 || w.lastComment(w.item) != "" {
		t.Fatalf("a paused item got a proposal: branch %q, pulls %v, comment %q", b, w.fake.Pulls(), w.lastComment(w.item))
	}

	// Another label pauses when the policy names it; the default then does not.
	e := w.env("develop")
	e.Policy.Box.GHActions.PausedLabel = "hold"
	p, err := Propose(ctx, e, w.agentBundle(map[string]string{"src/a.go": "package a\n\nfunc A() {}\n"}))
	if err != nil || p == nil || p.PR == 0 {
		t.Fatalf("propose with paused_label: hold, on an item labelled autonomy:paused: %+v, %v", p, err)
	}
	head := w.branch(p.Branch)

	// The pull request paused: no review status, and its branch is not moved.
	if err := w.fake.Label(p.PR, "ada", DefaultPausedLabel); err != nil {
		t.Fatal(err)
	}
	re := w.env("reviewer")
	re.Subject = strconv.Itoa(p.PR)
	_, err = Review(ctx, re, w.verdict(head, "approve"))
	refusedPaused(t, "review", err, p.PR)
	if s := w.fake.Statuses(head); len(s) != 0 {
		t.Errorf("a paused pull request got statuses %+v", s)
	}
	// The item itself unpaused (through the API, as a person would): the pull request still is.
	e = w.env("develop")
	if _, err := e.Client.Issues.RemoveLabelForIssue(ctx, "o", "r", w.item, "Autonomy:Paused"); err != nil {
		t.Fatal(err)
	}
	_, err = Propose(ctx, e, w.agentBundle(map[string]string{"src/a.go": "package a\n\nfunc B() {}\n"}))
	refusedPaused(t, "propose onto a paused pull request", err, p.PR)
	if got := w.branch(p.Branch); got != head {
		t.Errorf("the paused pull request's branch moved: %s → %s", head, got)
	}
}

// TestPausedItemApply: apply refuses each effect on a paused item (a comment, a state change, a
// launch on it) and applies the others.
func TestPausedItemApply(t *testing.T) {
	w, e := applyWorld(t)
	other := w.fake.AddIssue("another", "")
	if err := w.fake.Label(w.item, "ada", DefaultPausedLabel); err != nil {
		t.Fatal(err)
	}
	n, o := strconv.Itoa(w.item), strconv.Itoa(other)
	res, err := e.Apply(context.Background(), ApplyOptions{Installed: goldenInstalled(t), Actor: "pm", Session: "7",
		Outputs: outputs(t, "7",
			`{"tool":"comment","actor":"pm","input":{"item":"`+n+`","body":"Triaged."}}`,
			`{"tool":"set_state","actor":"pm","input":{"item":"`+n+`","state":"ready"}}`,
			`{"tool":"launch","actor":"pm","input":{"actor":"develop","subject":"`+n+`"}}`,
			`{"tool":"comment","actor":"pm","input":{"item":"`+o+`","body":"Seen."}}`,
		)})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range res {
		paused := strings.Contains(a.Refused, "#"+n+" is paused")
		if paused != (i < 3) {
			t.Errorf("effect %d (%s): refused %q", i, a.Effect.Tool, a.Refused)
		}
	}
	is, _ := w.fake.Issue(w.item)
	if len(is.Comments) != 0 || !slices.Equal(is.Labels, []string{DefaultPausedLabel}) || len(w.fake.Runs()) != 0 {
		t.Errorf("the paused item was acted on: comments %q, labels %v, runs %+v", is.Comments, is.Labels, w.fake.Runs())
	}
	if is, _ := w.fake.Issue(other); !slices.Equal(is.Comments, []string{"Seen."}) {
		t.Errorf("the other item: comments %q", is.Comments)
	}
}
