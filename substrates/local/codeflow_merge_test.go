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
