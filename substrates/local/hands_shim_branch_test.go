//go:build unix

package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/shim"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local/gitws"
)

var branchShimFleet = fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  pm:
    behavior: scripts/wait.sh
    capabilities: ["agent:launch@develop", "agent:launch@iso"]
    triggers: [{ dispatch: true }]
  develop:
    behavior: scripts/commit.sh
    capabilities: [code:propose]
    triggers: [{ dispatch: true }]
  iso:
    behavior: scripts/commit.sh
    execution: { workspace: isolated }
    triggers: [{ dispatch: true }]
`, files: map[string]string{
	"scripts/wait.sh": "#!/bin/sh\nwhile [ ! -e \"$AUTONOMY_DIR/done\" ]; do sleep 0.05; done\n" + scriptDone,
	"scripts/commit.sh": "#!/bin/sh\nset -e\necho \"$AUTONOMY_SESSION\" > work.txt\ngit add work.txt\n" +
		"git -c user.name=a -c user.email=a@example.com commit -qm \"work of $AUTONOMY_SESSION\"\n" + scriptDone,
}}

// The reference's skills launch their developer with bun scripts/runner.ts launch develop --ref N
// --branch agent/issue-N: the local runner runs an actor of the shared workspace on that branch,
// in a worktree of its own (it committed on the installation root's main before, unreviewed);
// an isolated actor keeps the branch the runner names.
func TestTheBunShimsBranchIsTheLaunchsBranch(t *testing.T) {
	dir := installFleet(t, branchShimFleet, true)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	pm := launch(t, r, LaunchRequest{Actor: "pm"})
	defer func() {
		_ = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644) // pm's wait ends
		waitEnded(t, r, pm.ID)
	}()
	h, s, err := newRunner(t, dir, Options{Session: pm.ID, Detach: true}).Hands() // as in production: pm's supervisor starts what it launches
	if err != nil {
		t.Fatal(err)
	}
	mainBefore := gitRun(t, dir, "rev-parse", "main")
	call, err := shim.Bun(strings.Fields("scripts/runner.ts launch develop --ref 9 --branch agent/issue-9"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.Shim(ctx, s, call)
	if err != nil {
		t.Fatal(err)
	}
	ts, ok := out.(ToolSession)
	if !ok || ts.Branch != "agent/issue-9" {
		t.Fatalf("the shim's launch answered %+v", out)
	}
	if got := waitEnded(t, r, ts.ID); got.Status != ir.Done || got.Branch != "agent/issue-9" {
		t.Fatalf("develop: %s on %q (%s)", got.Status, got.Branch, got.Reason)
	}
	if msg := gitRun(t, dir, "log", "-1", "--format=%s", "agent/issue-9"); msg != "work of "+ts.ID {
		t.Errorf("agent/issue-9 holds %q", msg)
	}
	if now := gitRun(t, dir, "rev-parse", "main"); now != mainBefore {
		t.Errorf("develop committed on main: %s", gitRun(t, dir, "log", "-1", "--format=%s", "main"))
	}

	// An isolated actor works on the runner's branch, whatever the launcher asks.
	call, _ = shim.Bun(strings.Fields("scripts/runner.ts launch iso --branch agent/mine"))
	if out, err = h.Shim(ctx, s, call); err != nil {
		t.Fatal(err)
	}
	if ts = out.(ToolSession); ts.Branch != "" {
		t.Fatalf("iso launched on %q", ts.Branch)
	}
	if got := waitEnded(t, r, ts.ID); got.Status != ir.Done {
		t.Fatalf("iso: %s (%s)\n%s", got.Status, got.Reason, sessionLogOf(r, ts.ID))
	}
	waitGone(t, filepath.Join(dir, ".autonomy", "worktrees", ts.ID))
	if msg := gitRun(t, dir, "log", "-1", "--format=%s", "autonomy/iso/"+ts.ID); msg != "work of "+ts.ID {
		t.Errorf("autonomy/iso/%s holds %q", ts.ID, msg)
	}
	if refs := gitRun(t, dir, "branch", "--list", "agent/mine"); refs != "" {
		t.Errorf("agent/mine was made: %q", refs)
	}
}

// A session's --branch may not be the code flow's target (its commits would land there
// unreviewed), a ref (refs/heads/release made refs/heads/refs/heads/release), a name a remote's
// starts (origin/main shadowed the remote-tracking branch), or an open proposal's branch.
func TestASessionsBranchIsRefusedWhereItWouldBypassReview(t *testing.T) {
	f := branchShimFleet
	f.yml += "policy:\n  box:\n    local: { targetBranch: release, tools: { max: { launch: 20 } } }\n"
	dir := installFleet(t, f, true)
	gitRun(t, dir, "branch", "release")
	gitRun(t, dir, "remote", "add", "origin", dir)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	pm := launch(t, r, LaunchRequest{Actor: "pm"})
	defer func() {
		_ = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
		waitEnded(t, r, pm.ID)
	}()
	h, s, err := newRunner(t, dir, Options{Session: pm.ID, Detach: true}).Hands() // as in production: pm's supervisor starts what it launches
	if err != nil {
		t.Fatal(err)
	}
	before := gitRun(t, dir, "rev-parse", "release")
	if _, _, err := r.Store.AddProposal(ctx, store.Proposal{Session: "s-other", Actor: "develop", Branch: "feature/x", Target: "release"}); err != nil {
		t.Fatal(err)
	}
	for branch, want := range map[string]string{
		"release":                      "it is the code flow's target branch",
		"refs/heads/release":           "name a branch, not a ref",
		"origin/main":                  "it starts with the remote origin's name",
		"autonomy/iso/" + pm.ID + "-2": "branches under autonomy/ are the runner's own",
		"feature/x":                    "proposal 1 is on it",
		"RELEASE":                      "it is the code flow's target branch", // one ref on macOS
		"Autonomy/iso/x":               "branches under autonomy/ are the runner's own",
	} {
		call, err := shim.Bun(strings.Fields("scripts/runner.ts launch develop --ref 9 --branch " + branch))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Shim(ctx, s, call); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--branch %s: %v, want refused saying %q", branch, err, want)
		}
	}
	if now := gitRun(t, dir, "rev-parse", "release"); now != before {
		t.Errorf("release moved: %s", gitRun(t, dir, "log", "-1", "--format=%s", "release"))
	}
	if refs := gitRun(t, dir, "for-each-ref", "--format=%(refname)", "refs/heads/refs", "refs/heads/origin"); refs != "" {
		t.Errorf("refs made: %q", refs)
	}
}

// A session's --branch is refused, whatever it is, while the code flow's target cannot be told:
// the root's HEAD, from which the target was pinned, moved (a session can move it), so the
// branch named could be the target (it was checked only when the target was known).
func TestASessionsBranchIsRefusedWhileTheTargetIsUnknown(t *testing.T) {
	dir := installFleet(t, branchShimFleet, true)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	repo, err := gitws.Repo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if target, err := r.targetBranch(ctx, repo); err != nil || target != "main" {
		t.Fatalf("target %q, %v", target, err)
	}
	pm := launch(t, r, LaunchRequest{Actor: "pm"})
	defer func() {
		_ = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
		waitEnded(t, r, pm.ID)
	}()
	gitRun(t, dir, "checkout", "-q", "-b", "elsewhere")
	h, s, err := newRunner(t, dir, Options{Session: pm.ID, Detach: true}).Hands()
	if err != nil {
		t.Fatal(err)
	}
	before := gitRun(t, dir, "rev-parse", "main")
	call, err := shim.Bun(strings.Fields("scripts/runner.ts launch develop --ref 9 --branch main"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Shim(ctx, s, call); err == nil || !strings.Contains(err.Error(), "the code flow's target branch cannot be told") {
		t.Errorf("--branch main with the root moved to another branch: %v", err)
	}
	if now := gitRun(t, dir, "rev-parse", "main"); now != before {
		t.Errorf("main moved: %s", gitRun(t, dir, "log", "-1", "--format=%s", "main"))
	}
}
