//go:build unix

package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/internal/store"
)

// GitHub's main renames notes/draft.md to docs/VISION.md after the proposal forked; the proposal
// edits notes/draft.md. Its commits and GitHub's compare (target...head) name only
// notes/draft.md, but GitHub's merge of a head behind a base whose protection is not strict is
// a 3-way merge that follows the rename into docs/VISION.md: the human gate reads what that
// merge lands, so a maintainer's ask is engaged before auto-merge is armed; and it is armed only
// where GitHub merges what was vetted.
func TestGitHubGateReadsWhatGitHubsMergeLands(t *testing.T) {
	g := newGHFlowRig(t)
	draft := g.flowRig.commitDraft("the vision")
	gitRun(t, g.dir, "push", "--quiet", "origin", "main")
	clone := filepath.Join(t.TempDir(), "c")
	if out, err := exec.Command("git", "clone", "-q", "-b", "main", g.bare, clone).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	gitRun(t, clone, "config", "user.name", "p")
	gitRun(t, clone, "config", "user.email", "p@example.com")
	if err := os.MkdirAll(filepath.Join(clone, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, clone, "mv", "notes/draft.md", "docs/VISION.md")
	gitRun(t, clone, "commit", "-qm", "the draft becomes the vision")
	gitRun(t, clone, "push", "-q", "origin", "main")
	body := strings.TrimSuffix(draft, "\n")
	p := g.proposeUntil("42", "notes/draft.md", body+"\nline 10: the agent's own vision", "approve", func(p store.Proposal) bool {
		return p.State == store.ProposalRefused || p.Ask != "" || strings.Contains(p.Reason, "auto-merge armed")
	})
	n := g.pullOfBranch("autonomy/develop/42")
	if p.Ask == "" || g.gh.AutoMerge(n) || !strings.Contains(p.Reason, "docs/VISION.md") {
		t.Fatalf("GitHub's merge writes the agent's edit into human-required docs/VISION.md; want a maintainer's ask naming it before arming, got ask %q armed %v: %s: %s", p.Ask, g.gh.AutoMerge(n), p.State, p.Reason)
	}
	// Approved by the maintainer, a head behind main is not armed while main's protection lets
	// GitHub merge it 3-way against main as it is then (which may move after arming); once the
	// protection requires heads up to date, GitHub merges only the head as it is, and it is.
	g.approveAsk(p.Ask)
	ctx := context.Background()
	g.r.advanceProposals(ctx)
	if p, _, _ = g.r.Store.Proposal(ctx, p.Seq); g.gh.AutoMerge(n) || !strings.Contains(p.Reason, "behind main") {
		t.Fatalf("a head behind a non-strict main: armed %v: %s: %s", g.gh.AutoMerge(n), p.State, p.Reason)
	}
	g.gh.Protect("main", ghfake.Protection{Contexts: []string{"agent-review"}, Strict: true})
	g.r.advanceProposals(ctx)
	if p, _, _ = g.r.Store.Proposal(ctx, p.Seq); !g.gh.AutoMerge(n) {
		t.Errorf("approved by the maintainer, main strict: not armed: %s: %s", p.State, p.Reason)
	}
}

// 300 files sorting before docs/ plus docs/VISION.md: what the merge lands names docs/VISION.md,
// GitHub's compare (its first 300 files) names only "300 files or more". One ask covers both
// lists: two gates, each engaging an ask for its own list, were approved in turn without end.
func TestGitHubOneAskCoversEveryGatedList(t *testing.T) {
	g := newGHFlowRig(t)
	many := map[string]string{"docs/VISION.md": "the agent's vision\n"}
	for i := range 300 {
		many[fmt.Sprintf("a/gen/f%03d.go", i)] = "package gen\n"
	}
	p, n := g.proposeAgainstUnpushed(many)
	ctx := context.Background()
	asks := map[string]bool{}
	for i := 0; i < 6 && p.Ask != "" && !g.gh.AutoMerge(n); i++ {
		asks[p.Ask] = true
		t.Logf("ask %d: %s: %s", i, p.Ask, p.Reason)
		g.approveAsk(p.Ask)
		g.r.advanceProposals(ctx)
		p, _, _ = g.r.Store.Proposal(ctx, p.Seq)
	}
	if !g.gh.AutoMerge(n) || len(asks) != 1 {
		t.Errorf("after %d approved asks (want one, naming both lists), armed %v: %s: %s", len(asks), g.gh.AutoMerge(n), p.State, p.Reason)
	}
}
