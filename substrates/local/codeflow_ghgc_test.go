//go:build unix

package local

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
)

// storeDir is the runner's store of GitHub's objects in the rig.
func (g *ghFlowRig) storeDir() string { return filepath.Join(g.dir, filepath.FromSlash(ghStorePath)) }

// storeRefs are the refs of the runner's store under refs/autonomy/.
func (g *ghFlowRig) storeRefs() []string {
	g.t.Helper()
	return strings.Fields(gitRun(g.t, g.storeDir(), "for-each-ref", "--format=%(refname)", "refs/autonomy/proposal/", "refs/autonomy/merged/"))
}

// inStore says whether the runner's store holds object id.
func (g *ghFlowRig) inStore(id string) bool {
	return exec.Command("git", "--git-dir", g.storeDir(), "cat-file", "-e", id).Run() == nil
}

// countObjects is git count-objects -v of the runner's store, by field.
func (g *ghFlowRig) countObjects() map[string]int {
	g.t.Helper()
	out := map[string]int{}
	for _, line := range strings.Split(gitRun(g.t, g.storeDir(), "count-objects", "-v"), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		out[k], _ = strconv.Atoi(v)
	}
	return out
}

// supersede arms a proposal of work item 42 that changes src/a.go to content, then has GitHub
// merge another proposal's head pushed onto its pull request instead: the first ends refused
// (superseded), the second merged, once the runner advances them. It returns both, and the
// blob of content, which only the first proposal reaches.
func (g *ghFlowRig) supersede(content string) (first, second store.Proposal, blob string) {
	g.t.Helper()
	first = g.proposeOnGitHub("42", "src/a.go", content, "approve")
	n := g.pullOfBranch("autonomy/develop/42")
	if first.State != store.ProposalApproved || !g.gh.AutoMerge(n) {
		g.t.Fatalf("the first proposal: %s: %s", first.State, first.Reason)
	}
	blob = gitRun(g.t, g.dir, "rev-parse", first.Head+":src/a.go")
	if !slices.Contains(g.storeRefs(), headRef(first.Seq)) || !g.inStore(blob) {
		g.t.Fatalf("the armed proposal's head is not in the runner's store: %q", g.storeRefs())
	}
	g.gh.DisableAutoMerge(n)
	second = g.proposeOnGitHub("42", "src/b.go", "package b", "approve")
	if second.State != store.ProposalApproved || !g.gh.AutoMerge(n) {
		g.t.Fatalf("the second proposal: %s: %s", second.State, second.Reason)
	}
	if err := g.gh.MergePull(n, "maintainer", "squash"); err != nil {
		g.t.Fatal(err)
	}
	return first, second, blob
}

// TestGitHubStoreDropsEndedProposals: on codeHost github, once proposals end (one refused as
// superseded, one merged on GitHub) their refs leave the runner's store of GitHub's objects and
// what only they reached is pruned, while a proposal still waiting for GitHub's merge keeps
// its ref; the store is left packed, no loose object in it.
func TestGitHubStoreDropsEndedProposals(t *testing.T) {
	g := newGHFlowRig(t)
	g.r.gcLimits = storeLimits{Loose: 1, Packs: 1} // every collection repacks
	waiting := g.proposeOnGitHub("7", "src/w.go", "package w", "approve")
	if waiting.State != store.ProposalApproved {
		t.Fatalf("the waiting proposal: %s: %s", waiting.State, waiting.Reason)
	}
	first, second, blob := g.supersede("package a // only the first proposal's")
	ctx := context.Background()
	g.r.advanceProposals(ctx)
	for _, p := range []store.Proposal{first, second} {
		if got, _, _ := g.r.Store.Proposal(ctx, p.Seq); got.State != store.ProposalMerged && got.State != store.ProposalRefused {
			t.Fatalf("proposal %d did not end: %s: %s", p.Seq, got.State, got.Reason)
		}
	}
	refs := g.storeRefs()
	for _, p := range []store.Proposal{first, second} {
		if slices.Contains(refs, headRef(p.Seq)) || slices.Contains(refs, mergedRef(p.Seq)) {
			t.Errorf("the store keeps a ref of ended proposal %d: %q", p.Seq, refs)
		}
	}
	if !slices.Contains(refs, headRef(waiting.Seq)) {
		t.Errorf("the store dropped the ref of proposal %d, which still waits for GitHub's merge: %q", waiting.Seq, refs)
	}
	if g.inStore(blob) {
		t.Errorf("the store keeps blob %s, which only an ended proposal reached", blob)
	}
	if c := g.countObjects(); c["count"] != 0 || c["packs"] != 1 {
		t.Errorf("the store after its collection: %v", c)
	}
}

// gitLog puts a git in front of PATH that logs each call (its working directory and arguments)
// to the file it returns, then runs the real one.
func gitLog(t *testing.T) string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	log := filepath.Join(bin, "calls")
	script := "#!/bin/sh\nprintf '%s %s\\n' \"$PWD\" \"$*\" >>" + log + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

// TestGitHubStoreCollectsWhenFree: a collection that finds the runner's store held by a step
// (another process's) is left pending, dropping nothing; the next tick collects; and a tick
// with nothing pending runs no git at all.
func TestGitHubStoreCollectsWhenFree(t *testing.T) {
	g := newGHFlowRig(t)
	first, second, _ := g.supersede("package a")
	free, held, err := tryLock(g.storeDir(), false)
	if err != nil || !held {
		t.Fatalf("the store's lock: %v %v", held, err)
	}
	ctx := context.Background()
	g.r.advanceProposals(ctx)
	if got, _, _ := g.r.Store.Proposal(ctx, first.Seq); got.State != store.ProposalRefused {
		t.Fatalf("the superseded proposal: %s: %s", got.State, got.Reason)
	}
	if refs := g.storeRefs(); !slices.Contains(refs, headRef(first.Seq)) {
		t.Errorf("collected while a step held the store: %q", refs)
	}
	free()
	log := gitLog(t)
	g.r.advanceProposals(ctx)
	refs := g.storeRefs()
	if slices.Contains(refs, headRef(first.Seq)) || slices.Contains(refs, headRef(second.Seq)) {
		t.Errorf("the next tick left the ended proposals' refs: %q", refs)
	}
	if calls, _ := os.ReadFile(log); !strings.Contains(string(calls), "update-ref -d "+headRef(first.Seq)) {
		t.Errorf("the next tick's git: %s", calls)
	}
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := g.r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if calls, _ := os.ReadFile(log); len(calls) > 0 {
		t.Errorf("a tick with nothing to collect ran git:\n%s", calls)
	}
}

// pushManyToMain commits n new files onto GitHub's main (the rig's bare repository), from a
// clone of it: more objects than git unpacks, so a fetch of them keeps a pack.
func (g *ghFlowRig) pushManyToMain(n int) {
	g.t.Helper()
	clone := filepath.Join(g.t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "--quiet", "--branch", "main", g.bare, clone).CombinedOutput(); err != nil {
		g.t.Fatalf("git clone: %v: %s", err, out)
	}
	for i := range n {
		name := filepath.Join(clone, "data", strconv.Itoa(i)+".txt")
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			g.t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte("datum "+strconv.Itoa(i)+"\n"), 0o644); err != nil {
			g.t.Fatal(err)
		}
	}
	gitRun(g.t, clone, "add", "-A")
	gitRun(g.t, clone, "-c", "user.name=someone", "-c", "user.email=someone@example.com", "commit", "-qm", "data")
	if out, err := exec.Command("git", "-C", clone, "push", "--quiet", "origin", "HEAD:refs/heads/main").CombinedOutput(); err != nil {
		g.t.Fatalf("git push: %v: %s", err, out)
	}
}

// listDir is the names in dir.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestGitHubChecksWriteNothingInTheRepository: on codeHost github, the checks before the push
// fetch GitHub's target into the runner's store only: with the repository's objects/pack a
// symbolic link a session planted elsewhere, and GitHub's main ahead by enough objects that a
// fetch keeps a pack, nothing is written through the link, and the repository holds no ref of
// GitHub's target; the proposal is checked all the same.
func TestGitHubChecksWriteNothingInTheRepository(t *testing.T) {
	g := newGHFlowRig(t)
	g.pushManyToMain(150)
	pack := filepath.Join(gitRun(t, g.dir, "rev-parse", "--path-format=absolute", "--git-path", "objects"), "pack")
	elsewhere := filepath.Join(t.TempDir(), "pack")
	if err := os.Rename(pack, elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, pack); err != nil {
		t.Fatal(err)
	}
	before := listDir(t, elsewhere)
	p := g.proposeUntil("42", "src/a.go", "package a", "approve", func(p store.Proposal) bool {
		return p.State == store.ProposalRefused || p.State == store.ProposalApproved
	})
	if p.State != store.ProposalApproved {
		t.Fatalf("the proposal was not checked and approved: %s: %s", p.State, p.Reason)
	}
	if after := listDir(t, elsewhere); !slices.Equal(after, before) {
		t.Errorf("written through the repository's objects/pack link: %q, was %q", after, before)
	}
	if refs := gitRun(t, g.dir, "for-each-ref", "--format=%(refname)", "refs/autonomy/"); refs != "" {
		t.Errorf("the repository holds the runner's refs: %s", refs)
	}
}

// TestGitHubGateFetchesThePullRef: the gate fetches the head GitHub merges, its pull request's
// refs/pull/<number>/head, into the runner's store: while that ref is at another commit than
// the head GitHub's API reports (GitHub moves it after a push, not at once), the approved
// proposal waits, saying so, and nothing is armed; once it is at the head, the store holds it
// for the proposal and auto-merge is armed.
func TestGitHubGateFetchesThePullRef(t *testing.T) {
	g := newGHFlowRig(t)
	p, n := g.askedForVision("the agent's vision")
	pullRef := "refs/pull/" + strconv.Itoa(n) + "/head"
	if got := gitRun(t, g.dir, "--git-dir", g.bare, "rev-parse", pullRef); got != p.Head {
		t.Fatalf("GitHub's %s is %s, not the pull request's head %s", pullRef, got, p.Head)
	}
	gitRun(t, g.dir, "--git-dir", g.bare, "update-ref", pullRef, gitRun(t, g.dir, "--git-dir", g.bare, "rev-parse", "main"))
	g.approveAsk(p.Ask)
	ctx := context.Background()
	g.r.advanceProposals(ctx)
	p, _, _ = g.r.Store.Proposal(ctx, p.Seq)
	if g.gh.AutoMerge(n) || p.State != store.ProposalApproved || !strings.Contains(p.Reason, pullRef+" is at") {
		t.Fatalf("GitHub's %s behind the pull request's head: armed %v: %s: %s", pullRef, g.gh.AutoMerge(n), p.State, p.Reason)
	}
	evs, _ := g.r.Store.Events(ctx, p.Session, 0)
	if !slices.ContainsFunc(evs, func(e store.Event) bool { return strings.Contains(e.Message, pullRef+" is at") }) {
		t.Errorf("no event says why it waits: %+v", evs)
	}
	gitRun(t, g.dir, "--git-dir", g.bare, "update-ref", pullRef, p.Head)
	g.r.advanceProposals(ctx)
	if p, _, _ = g.r.Store.Proposal(ctx, p.Seq); !g.gh.AutoMerge(n) {
		t.Fatalf("GitHub's %s at the head: not armed: %s: %s", pullRef, p.State, p.Reason)
	}
	if got := gitRun(t, g.storeDir(), "rev-parse", headRef(p.Seq)); got != p.Head {
		t.Errorf("the store holds %s for the proposal, not its pull request's head %s", got, p.Head)
	}
}

// TestGitHubGateWaitsForACollection: while another process collects the runner's store (holds
// it exclusively), tick's step of an approved proposal reads nothing there: it waits, saying
// so, and the next tick takes it on once the store is free.
func TestGitHubGateWaitsForACollection(t *testing.T) {
	g := newGHFlowRig(t)
	p, n := g.armedOn42()
	free, held, err := tryLock(g.storeDir(), true)
	if err != nil || !held {
		t.Fatalf("the store's lock: %v %v", held, err)
	}
	ctx := context.Background()
	g.r.advanceProposals(ctx)
	got, _, _ := g.r.Store.Proposal(ctx, p.Seq)
	if got.State != store.ProposalApproved || !strings.Contains(got.Reason, "another process is collecting the runner's store") {
		t.Errorf("while the store is collected: %s: %s", got.State, got.Reason)
	}
	free()
	g.r.advanceProposals(ctx)
	if got, _, _ = g.r.Store.Proposal(ctx, p.Seq); !strings.Contains(got.Reason, "auto-merge armed") || !g.gh.AutoMerge(n) {
		t.Errorf("once the store is free: %s: %s", got.State, got.Reason)
	}
}
