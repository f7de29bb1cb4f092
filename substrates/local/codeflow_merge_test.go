//go:build unix

package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local/gitws"
)

// What lands decides the human gate, not only what the proposal's commits change: main renames
// notes/draft.md to the human-required docs/VISION.md after the branch forked, the proposal edits
// notes/draft.md, and git's merge follows the rename into docs/VISION.md. That waits for the
// maintainer, and merges once the maintainer approved.
func TestCodeFlowHumanGateReadsWhatLands(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	var draft strings.Builder
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&draft, "line %d: a draft of the vision\n", i)
	}
	if err := os.MkdirAll(filepath.Join(g.dir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	g.set("notes/draft.md", draft.String())
	gitRun(t, g.dir, "add", "notes/draft.md")
	gitRun(t, g.dir, "commit", "-qm", "a draft")
	body := strings.TrimSuffix(draft.String(), "\n")
	p := g.propose("develop", "notes/draft.md", body+"\nline 10: the agent's own vision", "rename")
	vision := filepath.Join(g.dir, "docs/VISION.md")
	if strings.Contains(readFile(t, vision), "the agent's own vision") {
		t.Fatalf("the agent's edit landed in the human-required docs/VISION.md without a maintainer: %+v", p)
	}
	if p.State != store.ProposalApproved || p.Ask == "" || !strings.Contains(p.Reason, "docs/VISION.md") {
		t.Fatalf("a proposal whose merge lands in docs/VISION.md: %+v, want it waiting for the maintainer", p)
	}
	ctx := context.Background()
	token, err := g.r.NewAskToken(ctx, p.Ask)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.r.Update(ctx, p.Ask, ir.Patch{Status: ir.Done, Token: token, Evidence: "read what lands"}); err != nil {
		t.Fatal(err)
	}
	p, _, _ = g.r.Store.ProposalOf(ctx, p.Session)
	if p.State != store.ProposalMerged || !strings.Contains(readFile(t, vision), "the agent's own vision") {
		t.Fatalf("after the maintainer: %+v", p)
	}
}

// A merge that read the proposal before another process's merge engaged the maintainer's ask
// (each waits for the merge lock with what it read) engages no second ask: it merges from the
// proposal as read under the lock, so the one ask the proposal names is the one whose approval
// merges it.
func TestCodeFlowStaleMergeEngagesNoSecondAsk(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	p := g.propose("develop", "docs/VISION.md", "a new vision", "approve")
	if p.State != store.ProposalApproved || p.Ask == "" {
		t.Fatalf("before the maintainer: %+v", p)
	}
	ctx := context.Background()
	// What another process read before that ask was engaged: approved, no ask yet.
	stale := p
	stale.Ask, stale.Reason = "", "approved by reviewer"
	other := newRunner(t, g.dir, Options{})
	repo, err := gitws.Repo(g.dir)
	if err != nil {
		t.Fatal(err)
	}
	(&flow{r: other, repo: repo, p: stale}).advance(ctx)
	now, _, _ := g.r.Store.ProposalOf(ctx, p.Session)
	if asks := asksOf(t, g.r, p.Seq); now.Ask != p.Ask || len(asks) != 1 {
		t.Fatalf("a stale merge engaged another ask: the proposal names %s (was %s); asks %v", now.Ask, p.Ask, asks)
	}
	token, err := g.r.NewAskToken(ctx, p.Ask)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.r.Update(ctx, p.Ask, ir.Patch{Status: ir.Done, Token: token, Evidence: "read the diff"}); err != nil {
		t.Fatal(err)
	}
	if p, _, _ = g.r.Store.ProposalOf(ctx, p.Session); p.State != store.ProposalMerged || g.main() != p.Head {
		t.Fatalf("after the maintainer approved the ask the proposal named: %+v", p)
	}
}

// asksOf are the maintainer's asks the code flow engaged for proposal seq.
func asksOf(t *testing.T, r *Runner, seq int64) []string {
	t.Helper()
	all, err := r.Store.List(context.Background(), store.ListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range all {
		if s.Kind == "human" && s.Origin == fmt.Sprintf("proposal:%d", seq) {
			ids = append(ids, s.ID)
		}
	}
	return ids
}
