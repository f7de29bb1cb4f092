//go:build unix

package local

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// ghFlowRig is flowFleet on codeHost github: its repository's origin is the bare repository a
// GitHub fake serves (a push to it is a push to GitHub), main protected by agent-review.
type ghFlowRig struct {
	*flowRig
	gh   *ghfake.Server
	bare string
}

func newGHFlowRig(t *testing.T) *ghFlowRig { return newGHFlowRigOf(t, flowFleet) }

// newGHFlowRigOf is newGHFlowRig of fleet f.
func newGHFlowRigOf(t *testing.T, f fleet) *ghFlowRig { return newGHFlowRigAs(t, f, "") }

// newGHFlowRigAs is newGHFlowRigOf whose token's writes GitHub records as writesAs's (ghfake's
// WritesAs; "" for its default, github-actions[bot]).
func newGHFlowRigAs(t *testing.T, f fleet, writesAs string) *ghFlowRig {
	f.yml = strings.Replace(f.yml, "targets: [local]\n", "targets: [local]\ncodeHost: github\n", 1)
	dir := installFleet(t, f, true)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-qm", "install")
	bare := filepath.Join(t.TempDir(), "app.git")
	if out, err := exec.Command("git", "init", "--quiet", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	gitRun(t, dir, "remote", "add", "origin", bare)
	gitRun(t, dir, "push", "--quiet", "origin", "main")
	gh, err := ghfake.New(ghfake.Options{Owner: "acme", Repo: "app", Token: ghSecret, GitDir: bare, WritesAs: writesAs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	gh.SetSettings(ghfake.Settings{AllowAutoMerge: true, DefaultWorkflowPermissions: "read"})
	gh.Protect("main", ghfake.Protection{Contexts: []string{"agent-review"}})
	return &ghFlowRig{flowRig: &flowRig{t: t, dir: dir, r: ghRunner(t, dir, gh, Options{})}, gh: gh, bare: bare}
}

// proposeOnGitHub runs develop on work item ref and waits until its proposal is refused or armed
// for GitHub's merge.
func (g *ghFlowRig) proposeOnGitHub(ref, path, content, verdict string) store.Proposal {
	g.t.Helper()
	return g.proposeUntil(ref, path, content, verdict, func(p store.Proposal) bool {
		return p.State == store.ProposalRefused || strings.Contains(p.Reason, "auto-merge armed")
	})
}

// proposeUntil runs develop on work item ref and waits until its proposal is settled.
func (g *ghFlowRig) proposeUntil(ref, path, content, verdict string, settled func(store.Proposal) bool) store.Proposal {
	g.t.Helper()
	g.set("change", path+"\n"+content+"\n")
	g.set("verdict", verdict+"\n")
	s := launch(g.t, g.r, LaunchRequest{Actor: "develop", Ref: ref})
	if got := waitEnded(g.t, g.r, s.ID); got.Status != ir.Done {
		g.t.Fatalf("develop ended %s: %s", got.Status, got.Reason)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		p, ok, err := g.r.Store.ProposalOf(context.Background(), s.ID)
		if err != nil {
			g.t.Fatal(err)
		}
		if ok && settled(p) {
			return p
		}
		time.Sleep(20 * time.Millisecond)
	}
	p, _, _ := g.r.Store.ProposalOf(context.Background(), s.ID)
	g.t.Fatalf("the proposal of %s did not settle: %+v", s.ID, p)
	return p
}

// pullOfBranch is the pull request from branch of the repository (not of a fork; 0 when none).
func (g *ghFlowRig) pullOfBranch(branch string) int {
	for _, n := range g.gh.Pulls() {
		if is, _ := g.gh.Issue(n); is.Head == branch && is.HeadOwner == "" {
			return n
		}
	}
	return 0
}

// armedOn42 runs develop on work item 42 until its proposal is approved and armed to merge, and
// returns it with its pull request.
func (g *ghFlowRig) armedOn42() (store.Proposal, int) {
	g.t.Helper()
	p := g.proposeOnGitHub("42", "src/a.go", "package a", "approve")
	n := g.pullOfBranch("autonomy/develop/42")
	if p.State != store.ProposalApproved || n == 0 || !g.gh.AutoMerge(n) {
		g.t.Fatalf("the first proposal: %+v, pull request #%d", p, n)
	}
	return p, n
}

func states(sts []ghfake.Status, context string) []string {
	var out []string
	for _, s := range sts {
		if s.Context == context {
			out = append(out, s.State)
		}
	}
	return out
}

// TestGitHubCodeFlow: on codeHost github, a proposer's commits pass the checks, are pushed to
// autonomy/<actor>/<subject> and opened as a pull request into main through GitHub's API; the
// reviewer runs on that head; its approval is posted as agent-review: success on that head and
// arms auto-merge for that head only, so the pull request is mergeable and nothing is merged by
// the runner. A stale verdict (on another head) posts no success and arms nothing; a rejection
// posts agent-review: failure.
func TestGitHubCodeFlow(t *testing.T) {
	g := newGHFlowRig(t)
	mainBefore := g.main()

	p := g.proposeOnGitHub("42", "src/a.go", "package a", "approve")
	if p.State != store.ProposalApproved {
		t.Fatalf("proposal: %+v", p)
	}
	n := g.pullOfBranch("autonomy/develop/42")
	if n == 0 {
		t.Fatalf("no pull request from autonomy/develop/42: %v", g.gh.Pulls())
	}
	is, _ := g.gh.Issue(n)
	if is.Base != "main" || is.State != "open" {
		t.Errorf("pull request #%d: %+v", n, is)
	}
	pushed := strings.TrimSpace(gitRun(t, g.dir, "--git-dir", g.bare, "rev-parse", "refs/heads/autonomy/develop/42"))
	if pushed != p.Head {
		t.Errorf("pushed %s, proposed %s", pushed, p.Head)
	}
	if got := states(g.gh.Statuses(p.Head), "agent-review"); !slices.Equal(got, []string{"success"}) {
		t.Errorf("agent-review on the head: %q", got)
	}
	if !g.gh.AutoMerge(n) {
		t.Error("auto-merge is not armed")
	}
	if ok, why := g.gh.Mergeable(n); !ok {
		t.Errorf("not mergeable: %s", why)
	}
	if g.main() != mainBefore || strings.TrimSpace(gitRun(t, g.dir, "--git-dir", g.bare, "rev-parse", "main")) != mainBefore {
		t.Error("the runner merged: only GitHub merges on codeHost github")
	}

	stale := g.proposeOnGitHub("43", "src/b.go", "package b", "stale")
	if stale.State != store.ProposalRefused || !strings.Contains(stale.Reason, "stale verdict") {
		t.Errorf("a stale verdict: %+v", stale)
	}
	for _, n := range g.gh.Pulls() {
		is, _ := g.gh.Issue(n)
		if is.AutoMerge && is.Head != "autonomy/develop/42" {
			t.Errorf("auto-merge armed on #%d (%s) after a stale verdict", n, is.Head)
		}
	}
	if got := states(g.gh.Statuses(stale.Head), "agent-review"); slices.Contains(got, "success") {
		t.Errorf("agent-review after a stale verdict: %q", got)
	}

	rejected := g.proposeOnGitHub("44", "src/c.go", "package c", "reject")
	if rejected.State != store.ProposalRefused || !strings.Contains(rejected.Reason, "did not approve") {
		t.Errorf("a rejection: %+v", rejected)
	}
	if got := states(g.gh.Statuses(rejected.Head), "agent-review"); !slices.Equal(got, []string{"failure"}) {
		t.Errorf("agent-review after a rejection: %q", got)
	}
	assertNoSecret(t, g.dir, ghSecret, false)
}

// A fork's pull request from a branch named as the proposal's (autonomy/develop/42) is not the
// proposal's: the proposal gets its own pull request from the repository (GitHub allows both),
// reviewed and armed; the fork's gets no status and no auto-merge.
func TestGitHubCodeFlowLeavesAForkPullAlone(t *testing.T) {
	g := newGHFlowRig(t)
	// An identity of its own: CI's HOME has no git identity.
	evil := strings.TrimSpace(gitRun(t, g.dir, "-c", "user.name=mallory", "-c", "user.email=m@example.com", "--git-dir", g.bare, "commit-tree", "-p", "main", "-m", "harmless", "main^{tree}"))
	gitRun(t, g.dir, "--git-dir", g.bare, "update-ref", ghfake.ForkRef("mallory", "autonomy/develop/42"), evil)
	fork, err := g.gh.OpenForkPull("mallory", "Fix the thing", "autonomy/develop/42", "main")
	if err != nil {
		t.Fatal(err)
	}
	_, n := g.armedOn42()
	if n == fork {
		t.Fatalf("the proposal was made on mallory's pull request #%d", fork)
	}
	is, _ := g.gh.Issue(fork)
	if is.AutoMerge || len(g.gh.Statuses(evil)) > 0 || len(is.Comments) > 0 || len(is.Labels) > 0 {
		t.Errorf("mallory's pull request #%d was touched: auto-merge %v, statuses %+v, comments %q, labels %v", fork, is.AutoMerge, g.gh.Statuses(evil), is.Comments, is.Labels)
	}
}

// A proposal on the work item of another whose pull request is armed to merge waits: its push
// would put its head, not reviewed yet, under that auto-merge (GitHub keeps auto-merge armed
// across a push by someone with write access). The branch and the pull request keep the
// reviewed head.
func TestGitHubCodeFlowDoesNotPushUnderAnArmedMerge(t *testing.T) {
	g := newGHFlowRig(t)
	first, n := g.armedOn42()
	second := g.proposeUntil("42", "src/b.go", "package b", "approve", func(p store.Proposal) bool {
		return p.State == store.ProposalRefused || strings.Contains(p.Reason, "armed") || strings.Contains(p.Reason, "stale")
	})
	if !strings.Contains(second.Reason, fmt.Sprintf("pull request #%d from autonomy/develop/42 is armed to merge", n)) {
		t.Errorf("the second proposal: %s: %s", second.State, second.Reason)
	}
	if pushed := strings.TrimSpace(gitRun(t, g.dir, "--git-dir", g.bare, "rev-parse", "refs/heads/autonomy/develop/42")); pushed != first.Head {
		t.Errorf("the armed pull request's branch moved to %s (the second proposal's head is %s), from the reviewed %s", short(pushed), short(second.Head), short(first.Head))
	}
}

// A pull request GitHub merged with another head than the proposal's (its auto-merge disarmed,
// another proposal of the same work item pushed onto its branch, approved and merged) is not
// reported as this proposal's merge: it is refused as superseded, and the one whose head GitHub
// merged is the merged one.
func TestGitHubCodeFlowMergedOnlyWithItsHead(t *testing.T) {
	g := newGHFlowRig(t)
	first, n := g.armedOn42()
	g.gh.DisableAutoMerge(n)
	second := g.proposeOnGitHub("42", "src/b.go", "package b", "approve")
	if second.State != store.ProposalApproved || g.pullOfBranch("autonomy/develop/42") != n || !g.gh.AutoMerge(n) {
		t.Fatalf("the second proposal: %+v, pull request #%d", second, g.pullOfBranch("autonomy/develop/42"))
	}
	if err := g.gh.MergePull(n, "maintainer", "squash"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g.r.advanceProposals(ctx)
	got, _, _ := g.r.Store.Proposal(ctx, first.Seq)
	if got.State != store.ProposalRefused || !strings.Contains(got.Reason, "superseded") || !strings.Contains(got.Reason, short(second.Head)) {
		t.Errorf("the first proposal, after GitHub merged the second's head: %s: %s", got.State, got.Reason)
	}
	if got, _, _ := g.r.Store.Proposal(ctx, second.Seq); got.State != store.ProposalMerged {
		t.Errorf("the second proposal, whose head GitHub merged: %s: %s", got.State, got.Reason)
	}
}

// A pull request GitHub merged with a merge commit (its head then in the target's history) is
// recorded merged, as a squash is.
func TestGitHubCodeFlowMergedWithAMergeCommit(t *testing.T) {
	g := newGHFlowRig(t)
	p, n := g.armedOn42()
	if err := g.gh.MergePull(n, "maintainer", "merge"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g.r.advanceProposals(ctx)
	if got, _, _ := g.r.Store.Proposal(ctx, p.Seq); got.State != store.ProposalMerged || !strings.Contains(got.Reason, "merged on GitHub") {
		t.Errorf("after GitHub merged it with a merge commit: %s: %s", got.State, got.Reason)
	}
}
