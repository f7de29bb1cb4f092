package local

import (
	"context"
	"slices"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
)

var codeFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
codeHost: local-git
actors:
  develop:
    behavior: scripts/quick.sh
    capabilities: [code:propose]
    review: reviewer
    triggers: [{ dispatch: true }]
  reviewer:
    behavior: scripts/quick.sh
    capabilities: [code:review]
    triggers:
      - event: pull_request_target
        config: { types: [opened, synchronize] }
        params: { PR: subject.ref, WHO: subject.actor, ROLE: subject.actorRole, WHY: trigger.kind, BODY: subject.text }
  judge:
    behavior: scripts/quick.sh
    triggers: [{ event: pull_request_review, params: { PR: subject.ref, VERDICT: subject.text } }]
`,
	files: map[string]string{"scripts/quick.sh": "#!/bin/sh\n" + scriptDone},
}

func actorsOf(ss []store.Session) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Actor)
	}
	return out
}

// TestFireCodeEvent: the hook the local code flow calls fires the actors declaring the GitHub
// events a proposal and a verdict stand for, with the workflow's params, once per proposal head.
func TestFireCodeEvent(t *testing.T) {
	t.Parallel()
	r := newRunner(t, installFleet(t, codeFleet, false), Options{})
	ctx := context.Background()
	t.Cleanup(func() { settle(t, r) })
	open := CodeEvent{Kind: ProposalOpened, Proposal: "agent/develop/7", Head: "abc123", By: "develop", Text: "fix the bug"}
	ss, err := r.FireCodeEvent(ctx, open)
	if err != nil {
		t.Fatal(err)
	}
	if got := actorsOf(ss); !slices.Equal(got, []string{"reviewer"}) {
		t.Fatalf("a proposal fired %v, want [reviewer]", got)
	}
	want := map[string]string{"PR": "agent/develop/7", "WHO": "develop", "ROLE": "NONE", "WHY": "opened", "BODY": "fix the bug"}
	for k, v := range want {
		if ss[0].Params[k] != v {
			t.Errorf("param %s = %q, want %q", k, ss[0].Params[k], v)
		}
	}
	if again, err := r.FireCodeEvent(ctx, open); err != nil || len(again) > 0 {
		t.Errorf("the same proposal again fired %v (%v), want nothing", actorsOf(again), err)
	}
	if ss, err := r.FireCodeEvent(ctx, CodeEvent{Kind: ProposalUpdated, Proposal: "agent/develop/7", Head: "def456", By: "develop"}); err != nil || !slices.Equal(actorsOf(ss), []string{"reviewer"}) {
		t.Errorf("a new head fired %v (%v), want [reviewer]", actorsOf(ss), err)
	}
	ss, err = r.FireCodeEvent(ctx, CodeEvent{Kind: VerdictSubmitted, Proposal: "agent/develop/7", Head: "def456", By: "reviewer", Text: "approve"})
	if err != nil || !slices.Equal(actorsOf(ss), []string{"judge"}) || ss[0].Params["VERDICT"] != "approve" {
		t.Errorf("a verdict fired %v (%v), want [judge] with VERDICT approve", actorsOf(ss), err)
	}
	if _, err := r.FireCodeEvent(ctx, CodeEvent{Kind: "merged", Proposal: "p", Head: "h", By: "x"}); err == nil {
		t.Error("an unknown code event was accepted")
	}
}
