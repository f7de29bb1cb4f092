//go:build unix

package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	draft := g.commitDraft("the vision")
	body := strings.TrimSuffix(draft, "\n")
	p := g.propose("develop", "notes/draft.md", body+"\nline 10: the agent's own vision", "rename")
	vision := filepath.Join(g.dir, "docs/VISION.md")
	if strings.Contains(readFile(t, vision), "the agent's own vision") {
		t.Fatalf("the agent's edit landed in the human-required docs/VISION.md without a maintainer: %+v", p)
	}
	if p.State != store.ProposalApproved || p.Ask == "" || !strings.Contains(p.Reason, "docs/VISION.md") {
		t.Fatalf("a proposal whose merge lands in docs/VISION.md: %+v, want it waiting for the maintainer", p)
	}
	g.approveAsk(p.Ask)
	p, _, _ = g.r.Store.ProposalOf(context.Background(), p.Session)
	if p.State != store.ProposalMerged || !strings.Contains(readFile(t, vision), "the agent's own vision") {
		t.Fatalf("after the maintainer: %+v", p)
	}
	// Merged, it waits for nothing: its reason says the maintainer's ask was done.
	if strings.Contains(p.Reason, "waiting") || !strings.Contains(p.Reason, "ask "+p.Ask+" resolved done") {
		t.Errorf("merged, its reason: %s", p.Reason)
	}
}

// A merge that read the proposal before another process's merge engaged the maintainer's ask
// (each waits for the merge lock with what it read) engages no second ask: it merges from the
// proposal as read under the lock, so the one ask the proposal names is the one whose approval
// merges it.
func TestCodeFlowStaleMergeEngagesNoSecondAsk(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	p := g.awaitingMaintainer()
	ctx := context.Background()
	// What another process read before that ask was engaged: approved, no ask yet.
	stale := p
	stale.Ask, stale.Reason = "", "approved by reviewer"
	other := newRunner(t, g.dir, Options{})
	repo, err := gitws.Repo(g.dir)
	if err != nil {
		t.Fatal(err)
	}
	// What a tick that found the merge lock held said meanwhile.
	if _, _, err := g.r.Store.MoveProposal(ctx, p.Seq, []store.ProposalState{store.ProposalApproved}, func(m *store.Proposal) {
		m.Reason = "approved; not merged yet: another process holds the merge lock"
	}); err != nil {
		t.Fatal(err)
	}
	(&flow{r: other, repo: repo, p: stale}).advance(ctx)
	now, _, _ := g.r.Store.ProposalOf(ctx, p.Session)
	if asks := asksOf(t, g.r, p.Seq); now.Ask != p.Ask || len(asks) != 1 {
		t.Fatalf("a stale merge engaged another ask: the proposal names %s (was %s); asks %v", now.Ask, p.Ask, asks)
	}
	if !strings.Contains(now.Reason, "waiting for a maintainer's verified act: ask "+p.Ask) {
		t.Errorf("a proposal waiting for the maintainer's ask says: %s", now.Reason)
	}
	g.approveAsk(p.Ask)
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

// A merge that landed and was not recorded (the runner stopped, or the store's write failed,
// between moving main and recording the proposal merged) is recorded merged at the next step,
// not refused; a head that reached main without the code flow's merge is refused, saying so.
func TestCodeFlowRecordsAnInterruptedMerge(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	ctx := context.Background()
	p, release := g.approvedUnderLock("develop", "src/a.txt", "from the agent")
	// What the runner's merge does before it records the proposal merged: it records what it
	// lands, then fast-forwards main's checkout to it.
	if err := g.r.Store.Tx(ctx, func(tx *store.Tx) error { return tx.SetMeta(landingKey(p.Seq), p.Head) }); err != nil {
		t.Fatal(err)
	}
	gitRun(t, g.dir, "merge", "--ff-only", "--quiet", p.Head)
	release()
	g.r.advanceProposals(ctx)
	g.r.Wait()
	if p, _, _ = g.r.Store.ProposalOf(ctx, p.Session); p.State != store.ProposalMerged || p.Merged != p.Head || g.main() != p.Head {
		t.Fatalf("a merge that landed before the runner stopped: %+v, want merged at %s", p, p.Head)
	}

	p, release = g.approvedUnderLock("develop", "src/b.txt", "from the agent")
	gitRun(t, g.dir, "merge", "--ff-only", "--quiet", p.Head) // a person's merge, not the runner's
	release()
	g.r.advanceProposals(ctx)
	g.r.Wait()
	if p, _, _ = g.r.Store.ProposalOf(ctx, p.Session); p.State != store.ProposalRefused || !strings.Contains(p.Reason, "already in main, merged there outside the code flow") {
		t.Fatalf("a head a person merged: %+v", p)
	}

	// The runner's own merge records what it lands before it lands it.
	p = g.propose("develop", "src/c.txt", "from the agent", "approve")
	var landing string
	_ = g.r.Store.Tx(ctx, func(tx *store.Tx) error { landing, _, _ = tx.Meta(landingKey(p.Seq)); return nil })
	if p.State != store.ProposalMerged || landing != p.Merged {
		t.Fatalf("the runner's merge %+v recorded %q as what it lands", p, landing)
	}
}

// approvedUnderLock runs actor, changing path to content, with the merge lock held (as a merge
// under way holds it), and returns its proposal once its reviewer approved it, with the
// function that releases the lock.
func (g *flowRig) approvedUnderLock(actor, path, content string) (store.Proposal, func()) {
	g.t.Helper()
	gitDir := filepath.Join(g.dir, ".git")
	release, held, err := tryLock(gitDir, true)
	if err != nil || !held {
		g.t.Fatalf("locking %s: %v %v", gitDir, held, err)
	}
	g.t.Cleanup(release)
	g.set("change", path+"\n"+content+"\n")
	g.set("verdict", "approve\n")
	s := launch(g.t, g.r, LaunchRequest{Actor: actor, Ref: "42"})
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		p, ok, err := g.r.Store.ProposalOf(ctx, s.ID)
		if err != nil {
			g.t.Fatal(err)
		}
		if ok && p.State != store.ProposalProposed && p.State != store.ProposalInReview {
			if p.State != store.ProposalApproved {
				g.t.Fatalf("the proposal of %s: %+v, want approved", s.ID, p)
			}
			return p, release
		}
		time.Sleep(20 * time.Millisecond)
	}
	g.t.Fatalf("the proposal of %s was not approved", s.ID)
	return store.Proposal{}, nil
}

// Tick does not wait for a merge under way (any process that can open the git directory can
// hold its lock): it leaves each approved proposal for the next tick, saying why, and goes on.
func TestCodeFlowTickDoesNotWaitForTheMergeLock(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	p, release := g.approvedUnderLock("develop", "src/a.txt", "from the agent")
	// A guard only: before, each proposal waited two minutes for the lock.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := g.r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if p, _, _ = g.r.Store.ProposalOf(ctx, p.Session); p.State != store.ProposalApproved || !strings.Contains(p.Reason, "another process holds the merge lock") || !strings.Contains(p.Reason, "waited 0s") {
		t.Fatalf("a tick while the merge lock is held: %+v, want it left approved for the next tick, saying why", p)
	}
	release()
	if _, err := g.r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	g.r.Wait()
	if p, _, _ = g.r.Store.ProposalOf(ctx, p.Session); p.State != store.ProposalMerged || g.main() != p.Head {
		t.Fatalf("a tick once the lock is free: %+v", p)
	}
}

// The merge commit the runner writes holds a proposal's title on its first line only: a title
// recorded with a line break (the propose tool refuses one now) writes no line of its own into
// the runner's message.
func TestCodeFlowMergeMessageTitleIsOneLine(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	gitRun(t, g.dir, "checkout", "-q", "-b", "feature")
	g.set("src-t.txt", "from the agent\n")
	gitRun(t, g.dir, "add", "src-t.txt")
	gitRun(t, g.dir, "commit", "-qm", "a change")
	g.set("change", "src/t.txt\nx\n")
	// A person commits to main meanwhile: the runner makes a merge commit.
	p := g.submitFeature("moved", "Fix\n\nApproved-by: the maintainer\r\x1b[2K")
	if p.State != store.ProposalMerged || p.Merged == p.Head {
		t.Fatalf("the proposal: %+v, want merged by a merge commit", p)
	}
	msg := gitRun(t, g.dir, "log", "-1", "--format=%B", p.Merged)
	if first, _, _ := strings.Cut(msg, "\n"); strings.Contains(msg, "\nApproved-by") || strings.ContainsAny(msg, "\r\x1b") || !strings.HasPrefix(first, "Merge proposal") || !strings.Contains(first, "Approved-by: the maintainer") {
		t.Fatalf("the runner's merge message:\n%q", msg)
	}
}

// A maintainer's approval covers the human-required paths the ask named: when the target moves
// after the ask so that what lands touches another (a rename carries the proposal's edit under
// docs/RULES.md), that approval merges nothing, and a new ask names every path.
func TestCodeFlowApprovalCoversThePathsAsked(t *testing.T) {
	t.Parallel()
	f := flowFleet
	f.yml = strings.Replace(f.yml, "human_required_paths: [docs/VISION.md]", "human_required_paths: [docs/VISION.md, docs/RULES.md]", 1)
	g := newFlowRigOf(t, f)
	draft := g.commitDraft("the rules")
	if err := os.MkdirAll(filepath.Join(g.dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, g.dir, "checkout", "-q", "-b", "feature")
	g.set("notes/draft.md", draft+"line 10: the agent's own rule\n")
	g.set("docs/VISION.md", "a new vision\n")
	gitRun(t, g.dir, "add", "notes/draft.md", "docs/VISION.md")
	gitRun(t, g.dir, "commit", "-qm", "a vision, and a rule")
	ctx := context.Background()
	p := g.submitFeature("approve", "A vision")
	if p, _, _ = g.r.Store.ProposalOf(ctx, "9-zzzz"); p.State != store.ProposalApproved || p.Ask == "" || strings.Contains(p.Reason, "docs/RULES.md") {
		t.Fatalf("before the rename: %+v, want waiting for the maintainer on docs/VISION.md", p)
	}
	first := p.Ask
	if err := os.MkdirAll(filepath.Join(g.dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, g.dir, "mv", "notes/draft.md", "docs/RULES.md")
	gitRun(t, g.dir, "commit", "-qm", "the draft becomes the rules")
	g.approveAsk(first)
	rules := filepath.Join(g.dir, "docs/RULES.md")
	p, _, _ = g.r.Store.ProposalOf(ctx, "9-zzzz")
	if p.State != store.ProposalApproved || p.Ask == first || p.Ask == "" || !strings.Contains(p.Reason, "docs/RULES.md") || strings.Contains(readFile(t, rules), "the agent's own rule") {
		t.Fatalf("after an approval of docs/VISION.md, what lands touches docs/RULES.md too: %+v, want a new ask naming it", p)
	}
	g.approveAsk(p.Ask)
	if p, _, _ = g.r.Store.ProposalOf(ctx, "9-zzzz"); p.State != store.ProposalMerged || !strings.Contains(readFile(t, rules), "the agent's own rule") {
		t.Fatalf("after the maintainer approved every path: %+v", p)
	}
}

// A human-required path written as .gitignore and CODEOWNERS write a folder ("/docs/") holds a
// change to what the folder holds for the maintainer (attack29: it matched no path, and the
// change merged on the model reviewer's approval alone).
func TestCodeFlowHumanGateReadsAFolderAsWhatItHolds(t *testing.T) {
	t.Parallel()
	f := flowFleet
	f.yml = strings.Replace(f.yml, "human_required_paths: [docs/VISION.md]", "human_required_paths: [/docs/]", 1)
	if f.yml == flowFleet.yml {
		t.Fatal("the fleet names no human-required path to replace")
	}
	g := newFlowRigOf(t, f)
	if err := os.MkdirAll(filepath.Join(g.dir, "docs/team"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, g.dir, "checkout", "-q", "-b", "feature")
	g.set("docs/team/RULES.md", "the agent's own rule\n")
	gitRun(t, g.dir, "add", "docs/team/RULES.md")
	gitRun(t, g.dir, "commit", "-qm", "a rule")
	p := g.submitFeature("approve", "A rule")
	if p.State != store.ProposalApproved || p.Ask == "" || !strings.Contains(p.Reason, "docs/team/RULES.md") {
		t.Fatalf("the proposal: %+v, want approved and waiting for the maintainer on docs/team/RULES.md", p)
	}
}

// commitDraft commits a draft of what, nine lines, as notes/draft.md on main, and returns it.
func (g *flowRig) commitDraft(what string) string {
	g.t.Helper()
	var draft strings.Builder
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&draft, "line %d: a draft of %s\n", i, what)
	}
	if err := os.MkdirAll(filepath.Join(g.dir, "notes"), 0o755); err != nil {
		g.t.Fatal(err)
	}
	g.set("notes/draft.md", draft.String())
	gitRun(g.t, g.dir, "add", "notes/draft.md")
	gitRun(g.t, g.dir, "commit", "-qm", "a draft")
	return draft.String()
}

// approveAsk resolves the maintainer's ask done, as the operator does: a new token, then the
// update with it and evidence.
func (g *flowRig) approveAsk(ask string) {
	g.t.Helper()
	ctx := context.Background()
	token, err := g.r.NewAskToken(ctx, ask)
	if err != nil {
		g.t.Fatal(err)
	}
	if _, err := g.r.Update(ctx, ask, ir.Patch{Status: ir.Done, Token: token, Evidence: "read what lands"}); err != nil {
		g.t.Fatal(err)
	}
}

// awaitingMaintainer proposes a new docs/VISION.md, a human-required path, and returns the
// proposal approved by its reviewer and waiting for the maintainer's ask.
func (g *flowRig) awaitingMaintainer() store.Proposal {
	g.t.Helper()
	p := g.propose("develop", "docs/VISION.md", "a new vision", "approve")
	if p.State != store.ProposalApproved || p.Ask == "" {
		g.t.Fatalf("before the maintainer: %+v", p)
	}
	return p
}

// The proposal adds docs/RULES.md in one commit and removes it in the next (net: nothing), and
// adds a line to notes/draft.md. The ask names docs/RULES.md; the maintainer approves (nothing
// of it lands). main then renames notes/draft.md to docs/RULES.md: what lands in docs/RULES.md is
// the agent's line, under the path the approval named.
func TestApprovalOfAPathNothingLandsAtIsNotReused(t *testing.T) {
	f := flowFleet
	f.yml = strings.Replace(f.yml, "human_required_paths: [docs/VISION.md]", "human_required_paths: [docs/VISION.md, docs/RULES.md]", 1)
	g := newFlowRigOf(t, f)
	draft := g.commitDraft("the rules")
	os.MkdirAll(filepath.Join(g.dir, "docs"), 0o755)
	gitRun(t, g.dir, "checkout", "-q", "-b", "feature")
	g.set("docs/RULES.md", "placeholder\n")
	gitRun(t, g.dir, "add", "docs/RULES.md")
	gitRun(t, g.dir, "commit", "-qm", "rules placeholder")
	gitRun(t, g.dir, "rm", "-q", "docs/RULES.md")
	g.set("notes/draft.md", draft+"line 10: MALICIOUS\n")
	gitRun(t, g.dir, "add", "notes/draft.md")
	gitRun(t, g.dir, "commit", "-qm", "placeholder gone; a note")
	ctx := context.Background()
	g.submitFeature("approve", "A note")
	p, _, _ := g.r.Store.ProposalOf(ctx, "9-zzzz")
	if p.Ask == "" {
		t.Fatalf("no ask: %+v", p)
	}
	t.Logf("asked: %s", p.Reason)
	os.MkdirAll(filepath.Join(g.dir, "docs"), 0o755)
	gitRun(t, g.dir, "mv", "notes/draft.md", "docs/RULES.md")
	gitRun(t, g.dir, "commit", "-qm", "the draft becomes the rules")
	first := p.Ask
	g.approveAsk(first)
	p, _, _ = g.r.Store.ProposalOf(ctx, "9-zzzz")
	if got := readFile(t, filepath.Join(g.dir, "docs/RULES.md")); p.State == store.ProposalMerged || strings.Contains(got, "MALICIOUS") {
		t.Fatalf("the approval of docs/RULES.md (added and removed, nothing landing) merged the agent's line into it: %s: %s", p.State, p.Reason)
	}
	if p.Ask == "" || p.Ask == first || !strings.Contains(p.Reason, "docs/RULES.md") {
		t.Fatalf("what lands at docs/RULES.md changed since the ask: want a new ask naming it, got %q: %s", p.Ask, p.Reason)
	}
	// The new ask names the diff of what lands, which shows the agent's line in docs/RULES.md.
	evs, err := g.r.Store.Events(ctx, p.Ask, 0)
	if err != nil {
		t.Fatal(err)
	}
	var diff []string
	for _, e := range evs {
		if i := strings.Index(e.Message, "git diff "); e.Kind == "proposal" && i >= 0 {
			diff = strings.Fields(e.Message[i:])[2:4]
		}
	}
	if diff == nil {
		t.Fatalf("the ask's text names no diff of what lands: %+v", evs)
	}
	if out := gitRun(t, g.dir, "diff", diff[0], diff[1], "--", "docs/RULES.md"); !strings.Contains(out, "+line 10: MALICIOUS") {
		t.Errorf("git diff %s %s shows no agent's line in docs/RULES.md:\n%s", diff[0], diff[1], out)
	}
}

// A target that moves between the runner's merge and its move of the target (another merge in
// between) leaves the proposal approved and waiting, its maintainer's ask kept: the next step
// merges it into the current target.
func TestCodeFlowTargetMovedWhileMergingWaits(t *testing.T) {
	g := newFlowRig(t)
	p := g.awaitingMaintainer()
	ctx := context.Background()
	old := gitRun(t, g.dir, "rev-parse", "main")
	g.set("other.md", "a person's note\n")
	gitRun(t, g.dir, "add", "other.md")
	gitRun(t, g.dir, "commit", "-qm", "a person's note")
	repo, err := gitws.Repo(g.dir)
	if err != nil {
		t.Fatal(err)
	}
	(&flow{r: g.r, repo: repo, p: p}).land(ctx, old, p.Head) // main moved from old meanwhile
	p, _, _ = g.r.Store.ProposalOf(ctx, p.Session)
	if p.State != store.ProposalApproved || !strings.Contains(p.Reason, "moved") {
		t.Fatalf("main moved while it merged: %s: %s, want it approved and waiting", p.State, p.Reason)
	}
	g.approveAsk(p.Ask)
	p, _, _ = g.r.Store.ProposalOf(ctx, p.Session)
	if p.State != store.ProposalMerged || readFile(t, filepath.Join(g.dir, "docs/VISION.md")) == "" || readFile(t, filepath.Join(g.dir, "other.md")) == "" {
		t.Errorf("at the next step, with the maintainer's approval: %s: %s", p.State, p.Reason)
	}
}

// submitFeature records the branch feature the test committed, at its head, as a proposal of
// develop into main titled title (session 9-zzzz), back on main with the reviewer's verdict set
// to verdict, advances it and returns it once it settled and the runner's work is done.
func (g *flowRig) submitFeature(verdict, title string) store.Proposal {
	g.t.Helper()
	head := gitRun(g.t, g.dir, "rev-parse", "HEAD")
	gitRun(g.t, g.dir, "checkout", "-q", "main")
	g.set("verdict", verdict+"\n")
	ctx := context.Background()
	if _, _, err := g.r.Store.AddProposal(ctx, store.Proposal{Session: "9-zzzz", Actor: "develop", Branch: "feature", Head: head, Target: "main", Title: title}); err != nil {
		g.t.Fatal(err)
	}
	g.r.advanceProposals(ctx)
	p := g.settled("9-zzzz")
	g.r.Wait()
	return p
}
