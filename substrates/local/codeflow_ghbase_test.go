//go:build unix

package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// proposeAgainstUnpushed commits files on the local main without pushing them to GitHub (what a
// session does with git update-ref refs/heads/main, its sandbox writing the git directory), then
// runs develop on src/a.go, and returns its proposal once it is refused, armed, or waits for a
// person, with its pull request.
func (g *ghFlowRig) proposeAgainstUnpushed(files map[string]string) (store.Proposal, int) {
	g.t.Helper()
	for path, content := range files {
		full := filepath.Join(g.dir, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			g.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			g.t.Fatal(err)
		}
	}
	gitRun(g.t, g.dir, "add", "-A")
	gitRun(g.t, g.dir, "commit", "--allow-empty", "-qm", "not on GitHub")
	p := g.proposeUntil("42", "src/a.go", "package a", "approve", func(p store.Proposal) bool {
		return p.State == store.ProposalRefused || p.Ask != "" || strings.Contains(p.Reason, "auto-merge armed")
	})
	return p, g.pullOfBranch("autonomy/develop/42")
}

// filesOnGitHub are the files a pull request of head brings into main: GitHub's main...head.
func (g *ghFlowRig) filesOnGitHub(head string) []string {
	g.t.Helper()
	out := gitRun(g.t, g.dir, "--git-dir", g.bare, "diff", "--name-only", "--no-renames", "main..."+head)
	return strings.Fields(out)
}

// TestGitHubCodeFlowChecksGitHubsTarget: on codeHost github the checks take the target as GitHub
// has it, not the local branch a session can move: a human-required path committed on the local
// main but never pushed is what the pull request brings, so the proposal waits for a maintainer
// and nothing is armed.
func TestGitHubCodeFlowChecksGitHubsTarget(t *testing.T) {
	g := newGHFlowRig(t)
	p, n := g.proposeAgainstUnpushed(map[string]string{"docs/VISION.md": "the agent's vision\n"})
	if n == 0 {
		t.Fatalf("no pull request: %+v", p)
	}
	if got := g.filesOnGitHub(p.Head); !slices.Equal(got, []string{"docs/VISION.md", "src/a.go"}) {
		t.Fatalf("the pull request brings %q", got)
	}
	if g.gh.AutoMerge(n) || p.Ask == "" || !strings.Contains(p.Reason, "docs/VISION.md") {
		t.Errorf("a pull request bringing docs/VISION.md: armed %v; %s: %s (ask %q)", g.gh.AutoMerge(n), p.State, p.Reason, p.Ask)
	}
}

// TestGitHubCodeFlowGatesOnGitHubsFileList: immediately before arming, the runner lists what
// GitHub's compare of the target with the head says the pull request brings; 300 files or more
// (GitHub lists no more, so the rest is unvetted) wait for a maintainer, and nothing is armed.
func TestGitHubCodeFlowGatesOnGitHubsFileList(t *testing.T) {
	g := newGHFlowRig(t)
	// Committed on the local main unpushed: the checks see all 301 files and pass them (no
	// refused or human-required path); GitHub's compare lists 300.
	many := map[string]string{}
	for i := range 300 {
		many[fmt.Sprintf("src/gen/f%03d.go", i)] = "package gen\n"
	}
	p, n := g.proposeAgainstUnpushed(many)
	if n == 0 {
		t.Fatalf("no pull request: %+v", p)
	}
	if got := g.filesOnGitHub(p.Head); len(got) != 301 {
		t.Fatalf("the pull request brings %d files", len(got))
	}
	if g.gh.AutoMerge(n) || p.Ask == "" || !strings.Contains(p.Reason, "300 files or more") {
		t.Fatalf("a pull request of 301 files: armed %v; %s: %s (ask %q)", g.gh.AutoMerge(n), p.State, p.Reason, p.Ask)
	}
	// The maintainer's verified act arms it.
	ctx := context.Background()
	token, err := g.r.NewAskToken(ctx, p.Ask)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.r.Update(ctx, p.Ask, ir.Patch{Status: ir.Done, Token: token, Evidence: "read the 301 files"}); err != nil {
		t.Fatal(err)
	}
	if p, _, _ = g.r.Store.Proposal(ctx, p.Seq); !g.gh.AutoMerge(n) || !strings.Contains(p.Reason, "auto-merge armed") {
		t.Errorf("after the maintainer's act: armed %v; %s: %s", g.gh.AutoMerge(n), p.State, p.Reason)
	}
}

// What GitHub's compare cannot see is checked against GitHub's target too: a workflow added and
// removed again on the local main, never pushed, is in the commits the pull request brings
// (refused, as any commit touching a workflow), though not in its net difference.
func TestGitHubCodeFlowChecksEveryCommitGitHubLacks(t *testing.T) {
	g := newGHFlowRig(t)
	wf := filepath.Join(g.dir, ".github", "workflows", "x.yml")
	if err := os.MkdirAll(filepath.Dir(wf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wf, []byte("on: push\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, g.dir, "add", "-A")
	gitRun(t, g.dir, "commit", "-qm", "a workflow")
	gitRun(t, g.dir, "rm", "-q", wf)
	gitRun(t, g.dir, "commit", "-qm", "gone again")
	p, n := g.proposeAgainstUnpushed(nil)
	if p.State != store.ProposalRefused || !strings.Contains(p.Reason, ".github/workflows/x.yml") || (n != 0 && g.gh.AutoMerge(n)) {
		t.Errorf("a pull request bringing a commit that adds a workflow: %s: %s (pull request #%d)", p.State, p.Reason, n)
	}
}

// A target branch GitHub lacks (it exists only in the local repository) refuses the proposal,
// saying so, and nothing is pushed.
func TestGitHubCodeFlowTargetMissingOnGitHub(t *testing.T) {
	f := flowFleet
	f.yml = strings.Replace(f.yml, "  box:\n", "  box:\n    local: { targetBranch: release }\n", 1)
	g := newGHFlowRigOf(t, f)
	gitRun(t, g.dir, "branch", "release")
	p, n := g.proposeAgainstUnpushed(nil)
	if p.State != store.ProposalRefused || !strings.Contains(p.Reason, "the target branch release does not exist on GitHub") || n != 0 {
		t.Errorf("a proposal into a branch GitHub lacks: %s: %s (pull request #%d)", p.State, p.Reason, n)
	}
}

// Processes advancing proposals at once (a supervisor, tick) each read GitHub's target: none
// fails for another's fetch, and the runner's ref holds GitHub's commit.
func TestGitHubTargetFetchedAtOnce(t *testing.T) {
	g := newGHFlowRig(t)
	ctx := context.Background()
	gh, err := (&flow{r: g.r, repo: g.dir}).github(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(gitRun(t, g.dir, "--git-dir", g.bare, "rev-parse", "main"))
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			sha, err := gh.fetchTarget(ctx, g.dir, "main")
			if err == nil && sha != want {
				err = fmt.Errorf("fetched %s, GitHub's main is %s", sha, want)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if got := gitRun(t, g.dir, "rev-parse", baseRef("main")); got != want {
		t.Errorf("%s is %s, GitHub's main %s", baseRef("main"), got, want)
	}
}

// GitHub answers 404 for a repository the token cannot see as for a missing branch: a target the
// API answers 404 for in a repository the runner's token cannot read leaves the proposal
// waiting (tick retries), not refused for good.
func TestGitHubCodeFlowHiddenRepositoryWaits(t *testing.T) {
	g := newGHFlowRig(t)
	g.r.opts.Env = append(g.r.opts.Env, "GITHUB_REPOSITORY=acme/hidden")
	p := g.proposeUntil("42", "src/a.go", "package a", "approve", func(p store.Proposal) bool {
		return p.State == store.ProposalRefused || strings.Contains(p.Reason, "cannot be read with the runner's token") || strings.Contains(p.Reason, "auto-merge armed")
	})
	if p.State == store.ProposalRefused || !strings.Contains(p.Reason, "acme/hidden") {
		t.Errorf("a target in a repository the token cannot see: %s: %s, want it waiting", p.State, p.Reason)
	}
}
