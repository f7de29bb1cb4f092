//go:build unix

package local

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
)

// personFleet is flowFleet whose reviewer delivers open-autonomy.review.v1: approve is a
// success, person a success with humanApprovalRequired: true (the code is approved, a person must
// approve the change), reject a failure.
func personFleet() fleet {
	f := fleet{yml: strings.Replace(flowFleet.yml, "result: { schema: autonomy.review.v1 }", "result: { schema: open-autonomy.review.v1 }", 1), files: maps.Clone(flowFleet.files)}
	f.files["scripts/review.sh"] = `#!/bin/sh
set -e
head=$(git rev-parse HEAD)
v=success o=approved h=false
case $(cat "$AUTONOMY_DIR/verdict") in
  person) h=true ;;
  reject) v=failure o=changes-requested ;;
esac
printf '{"schema":"open-autonomy.review.v1","pr":1,"headSha":"%s","verdict":"%s","outcome":"%s","summary":"it changes the billing rules","findings":[],"humanApprovalRequired":%s}\n' "$head" "$v" "$o" "$h" > "$AUTONOMY_RESULT"
`
	return f
}

// TestCodeFlowReviewerAsksForAPerson (attack14 finding 3, local-git): a reviewer's success with
// humanApprovalRequired: true on a change that touches no human-required path approves the
// code, and the proposal does not merge: it waits for the maintainer's ask, which covers all it
// lands; once the operator resolves the ask done, it merges. A success without the key merges as
// before, with no ask.
func TestCodeFlowReviewerAsksForAPerson(t *testing.T) {
	t.Parallel()
	g := newFlowRigOf(t, personFleet())
	before := g.main()
	p := g.propose("develop", "src/billing.txt", "rates", "person")
	if p.State != store.ProposalApproved || p.Ask == "" || g.main() != before {
		t.Fatalf("its reviewer asks for a person: %+v (main %s, was %s), want it approved and waiting for the maintainer", p, short(g.main()), short(before))
	}
	if !strings.Contains(p.Reason, "src/billing.txt") || !strings.Contains(p.Reason, "reviewer asks that a person approve it") {
		t.Errorf("what it waits for: %s", p.Reason)
	}
	g.approveAsk(p.Ask)
	p, _, _ = g.r.Store.ProposalOf(context.Background(), p.Session)
	if p.State != store.ProposalMerged || g.main() != p.Head {
		t.Fatalf("after the maintainer approved its ask: %+v (main %s)", p, short(g.main()))
	}

	q := g.propose("develop", "src/other.txt", "x", "approve")
	if q.State != store.ProposalMerged || q.Ask != "" {
		t.Errorf("a success that asks for no person: %+v, want merged with no ask", q)
	}
}

// TestGitHubCodeFlowReviewerAsksForAPerson: on codeHost github the same verdict posts
// agent-review: success on the head and arms no auto-merge, so GitHub cannot merge it, until the
// operator resolves the maintainer's ask; then auto-merge is armed for that head and GitHub's
// merge is recorded.
func TestGitHubCodeFlowReviewerAsksForAPerson(t *testing.T) {
	t.Parallel()
	g := newGHFlowRigOf(t, personFleet())
	ctx := context.Background()
	p := g.proposeUntil("42", "src/billing.txt", "rates", "person", func(p store.Proposal) bool {
		return p.State == store.ProposalRefused || p.Ask != "" || strings.Contains(p.Reason, "auto-merge armed")
	})
	n := g.pullOfBranch("autonomy/develop/42")
	if n == 0 || p.State != store.ProposalApproved || p.Ask == "" {
		t.Fatalf("its reviewer asks for a person: %+v, pull request #%d", p, n)
	}
	if got := states(g.gh.Statuses(p.Head), "agent-review"); !slices.Equal(got, []string{"success"}) {
		t.Errorf("agent-review on the head: %q, want success: the reviewer approved the code", got)
	}
	if g.gh.AutoMerge(n) {
		t.Fatalf("auto-merge armed on #%d with no person's approval: %s", n, p.Reason)
	}
	g.approveAsk(p.Ask)
	if p, _, _ = g.r.Store.Proposal(ctx, p.Seq); !g.gh.AutoMerge(n) || !strings.Contains(p.Reason, "auto-merge armed") {
		t.Fatalf("after the maintainer's act: armed %v; %s: %s", g.gh.AutoMerge(n), p.State, p.Reason)
	}
	if err := g.gh.MergePull(n, "maintainer", "squash"); err != nil {
		t.Fatal(err)
	}
	g.r.advanceProposals(ctx)
	if p, _, _ = g.r.Store.Proposal(ctx, p.Seq); p.State != store.ProposalMerged {
		t.Errorf("after GitHub merged it: %s: %s", p.State, p.Reason)
	}
}
