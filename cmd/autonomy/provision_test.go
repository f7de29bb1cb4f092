package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/ghfake"
)

// provisionFake is a fake GitHub whose repository (OWNER/NAME, default o/r) has a main branch.
func provisionFake(t *testing.T, repo ...string) *ghfake.Server {
	t.Helper()
	opts := ghfake.Options{}
	if len(repo) > 0 {
		opts.Owner, opts.Repo, _ = strings.Cut(repo[0], "/")
	}
	return provisionFakeWith(t, opts)
}

// provisionFakeWith is provisionFake serving opts (its token and git directory set here).
func provisionFakeWith(t *testing.T, opts ghfake.Options) *ghfake.Server {
	t.Helper()
	dir := t.TempDir()
	bare := filepath.Join(dir, "origin.git")
	for _, args := range [][]string{
		{"init", "--quiet", "--bare", "--initial-branch=main", bare},
		{"clone", "--quiet", bare, filepath.Join(dir, "w")},
		{"-C", filepath.Join(dir, "w"), "-c", "user.name=t", "-c", "user.email=t@x", "commit", "--quiet", "--allow-empty", "-m", "init"},
		{"-C", filepath.Join(dir, "w"), "push", "--quiet", "origin", "HEAD:main"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	opts.Token, opts.GitDir = "ghs_admin", bare
	fake, err := ghfake.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	t.Setenv("GH_TOKEN", "ghs_admin")
	t.Setenv("GITHUB_API_URL", fake.URL)
	return fake
}

func provisionRun(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(append([]string{"provision", "../../profiles/sdlc", "--repo", "o/r"}, args...), nil, &out, &errb)
	return out.String() + errb.String(), code
}

// TestProvision: --dry-run prints the plan and changes nothing; a run makes the repository match;
// a second run changes nothing.
func TestProvision(t *testing.T) {
	fake := provisionFake(t)
	out, code := provisionRun(t, "--dry-run")
	if code != 0 || !strings.Contains(out, "dry run") || !strings.Contains(out, "create  branch protection of main") || !strings.Contains(out, "create  label needs-input (input-required)") {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	if st := fake.CurrentSettings(); st.AllowAutoMerge || st.DeleteBranchOnMerge || st.CanApprovePullRequestReviews || len(fake.Labels()) > 0 || len(fake.Variables()) > 0 {
		t.Fatalf("the dry run changed something: %+v %v %v", st, fake.Labels(), fake.Variables())
	}
	if _, ok := fake.ProtectionOf("main"); ok {
		t.Fatal("the dry run protected main")
	}

	out, code = provisionRun(t)
	if code != 0 {
		t.Fatalf("provision: exit %d\n%s", code, out)
	}
	p, ok := fake.ProtectionOf("main")
	if !ok || !slices.Equal(p.Contexts, []string{"agent-review", "human-approval", "ci"}) || !p.Strict || !p.EnforceAdmins || p.AllowForcePushes {
		t.Errorf("protection %+v (%v)", p, ok)
	}
	if st := fake.CurrentSettings(); !st.AllowAutoMerge || !st.DeleteBranchOnMerge || !st.CanApprovePullRequestReviews || st.DefaultWorkflowPermissions != "read" {
		t.Errorf("settings %+v", st)
	}
	want := []string{"agent-blocked", "done", "in-progress", "in-review", "needs-input", "ready", "triage", "wontfix"}
	if got := fake.Labels(); !slices.Equal(got, want) {
		t.Errorf("labels %v, want %v", got, want)
	}
	if v := fake.Variables(); v["AUTONOMY_PAUSED"] != "false" || len(v) != 1 {
		t.Errorf("variables %v", v)
	}

	out, code = provisionRun(t, "--format", "json")
	var doc struct {
		Steps []struct{ What, Action string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Steps) == 0 {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
	for _, s := range doc.Steps {
		if s.Action != "ok" {
			t.Errorf("the second run would %s %s", s.Action, s.What)
		}
	}
}

// TestProvisionKeepsStricter: a stricter setting already there is kept and said so; a variable
// the owner set (the fleet paused) is left.
func TestProvisionKeepsStricter(t *testing.T) {
	fake := provisionFake(t)
	fake.SetProtection("main", ghfake.FullProtection{Contexts: []string{"lint"}, RequiredApprovingReviews: 2, LinearHistory: true})
	fake.SetSettings(ghfake.Settings{DefaultWorkflowPermissions: "read", AllowAutoMerge: true})
	out, code := provisionRun(t, "--dry-run")
	if code != 0 || !strings.Contains(out, "kept: 2 required approving reviews, linear history, required check lint") {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	if p, _ := fake.ProtectionOf("main"); !slices.Equal(p.Contexts, []string{"lint"}) {
		t.Fatalf("the dry run changed the protection: %+v", p)
	}
	out, code = provisionRun(t)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	p, _ := fake.ProtectionOf("main")
	if !slices.Equal(p.Contexts, []string{"lint", "agent-review", "human-approval", "ci"}) || p.RequiredApprovingReviews != 2 || !p.LinearHistory || !p.EnforceAdmins || !p.Strict {
		t.Errorf("protection %+v", p)
	}
}

// TestProvisionHumanGate: the human gate is required where the profile has human-required
// paths (sdlc: TestProvision) and not where it has none.
func TestProvisionHumanGate(t *testing.T) {
	fake := provisionFake(t)
	dir := t.TempDir()
	for name, data := range map[string]string{
		"ir.yml": `schema: autonomy.ir.v1
targets: [gh-actions]
actors:
  develop:
    behavior: skills/develop
    capabilities: [code:propose]
    triggers: [{ dispatch: true }]
    review: reviewer
  reviewer:
    behavior: skills/reviewer
    capabilities: [code:review]
    triggers: [{ dispatch: true }]
    result: { schema: autonomy.review.v1 }
`,
		"skills/develop/SKILL.md": "# develop\n", "skills/reviewer/SKILL.md": "# reviewer\n",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	if code := Run([]string{"provision", dir, "--repo", "o/r"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	if p, _ := fake.ProtectionOf("main"); !slices.Equal(p.Contexts, []string{"agent-review", "ci"}) {
		t.Errorf("protection %+v, want agent-review and ci only", p)
	}
}

// TestProvisionNarrowsWriteDefault: a repository whose default workflow token is write (every
// workflow without a permissions: block could dispatch the fleet as github-actions[bot]) is
// named by the dry run, which changes nothing, and narrowed to read by a run, keeping GitHub
// Actions allowed to create pull requests.
func TestProvisionNarrowsWriteDefault(t *testing.T) {
	fake := provisionFake(t)
	fake.SetSettings(ghfake.Settings{DefaultWorkflowPermissions: "write"})
	out, code := provisionRun(t, "--dry-run")
	if code != 0 || !strings.Contains(out, "update  actions: default workflow token permissions: write → read (a workflow without a permissions: block gets a read-only GITHUB_TOKEN") {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	if st := fake.CurrentSettings(); st.DefaultWorkflowPermissions != "write" {
		t.Fatalf("the dry run changed the default: %+v", st)
	}
	if out, code = provisionRun(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if st := fake.CurrentSettings(); st.DefaultWorkflowPermissions != "read" || !st.CanApprovePullRequestReviews {
		t.Errorf("settings %+v, want read and pull requests allowed", st)
	}
}

func TestProvisionLeavesOwnerVariables(t *testing.T) {
	fake := provisionFake(t)
	if code := Run([]string{"provision", "../../profiles/sdlc", "--repo", "o/r"}, nil, &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatal("first run failed")
	}
	// The owner pauses the fleet; provisioning again must not resume it.
	fake.SetVariable("AUTONOMY_PAUSED", "true")
	out, code := provisionRun(t)
	if code != 0 || !strings.Contains(out, "left    variable AUTONOMY_PAUSED: true (set by the repository's owner)") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if fake.Variables()["AUTONOMY_PAUSED"] != "true" {
		t.Error("provisioning resumed a paused fleet")
	}
}

func TestProvisionUsage(t *testing.T) {
	provisionFake(t)
	sdlc, err := filepath.Abs("../../profiles/sdlc")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("usage", func(t *testing.T) {
		t.Chdir(t.TempDir()) // no git repository: no remote to read --repo from
		for _, args := range [][]string{{"provision", sdlc, "--repo", "nope"}, {"provision", sdlc}} {
			var out bytes.Buffer
			if code := Run(args, nil, &out, &out); code != 2 {
				t.Errorf("%v: exit %d, want 2\n%s", args, code, out.String())
			}
		}
	})
	t.Setenv("GH_TOKEN", "wrong")
	if out, code := provisionRun(t); code != 2 || !strings.Contains(out, "401") {
		t.Errorf("a bad token: exit %d\n%s", code, out)
	}
}

// provision reads --repo from the git remote origin, and without a token plans a dry run
// without reading the repository; a real run still needs the token.
func TestProvisionInfersRepoAndPlansWithoutToken(t *testing.T) {
	sdlc, err := filepath.Abs("../../profiles/sdlc")
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", "git@github.com:acme/app.git"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	t.Chdir(repo)
	t.Setenv("GH_TOKEN", "")
	t.Setenv("GITHUB_TOKEN", "")
	code, out, errOut := run(t, "provision", sdlc, "--dry-run")
	if code != 0 || !strings.HasPrefix(out, "plan for acme/app (dry run: nothing changes):\n") ||
		!strings.Contains(out, "  plan    branch protection of the default branch: not read (no token) → agent-review, human-approval, ci required") ||
		!strings.Contains(out, "planned without reading the repository") {
		t.Errorf("dry run without a token: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, "provision", sdlc); code != 2 || !strings.Contains(errOut, "set GH_TOKEN") || !strings.Contains(errOut, "acme/app") {
		t.Errorf("a real run without a token: exit %d\n%s", code, errOut)
	}
}

// TestProvisionLeavesTheBranchOfAFleetWithNoCodeFlow: a fleet where no actor proposes or
// reviews code (the hello profile) gets no branch protection requiring agent-review, which
// nothing would ever post: every pull request, a person's too, would wait on it forever. The
// plan says so, with and without a token, and a run protects nothing.
func TestProvisionLeavesTheBranchOfAFleetWithNoCodeFlow(t *testing.T) {
	fake := provisionFake(t)
	hello := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := Run(append([]string{"provision", "../../profiles/hello", "--repo", "o/r"}, args...), nil, &out, &errb)
		return out.String() + errb.String(), code
	}
	const left = "left    branch protection of main: not changed (no actor proposes or reviews code: nothing posts agent-review, so requiring it would hold every pull request)"
	out, code := hello()
	if code != 0 || !strings.Contains(out, left) || strings.Contains(out, "agent-review required") {
		t.Fatalf("provision: exit %d\n%s", code, out)
	}
	if p, ok := fake.ProtectionOf("main"); ok {
		t.Errorf("main protected: %+v", p)
	}
	t.Setenv("GH_TOKEN", "")
	out, code = hello("--dry-run")
	if code != 0 || !strings.Contains(out, "left    branch protection of the default branch: not read (no token) (no actor proposes") {
		t.Errorf("dry run without a token: exit %d\n%s", code, out)
	}
}
