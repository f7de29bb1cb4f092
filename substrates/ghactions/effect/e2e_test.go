//go:build unix

package effect_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agentcli"
	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/testbin"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// TestMain keeps every git the tests run, and every process they start, from this machine's git
// configuration: once for the process, since the end-to-end tests run in parallel (t.Setenv
// cannot be called there).
func TestMain(m *testing.M) {
	os.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Exit(m.Run())
}

// TestEndToEnd: one work item flows PM → develop → propose → reviewer → review on a repository
// where profiles/sdlc is installed, against ghfake over a bare git repository, with the real
// pinned codex CLI playing a scripted model. Every job runs what the generated workflow
// declares (runner_test.go). At the end the pull request exists, its head has agent-review:
// success, and branch protection requiring agent-review reports it mergeable; a second run of
// the review with the verdict for a head the pull request no longer has leaves no status. The
// repository is provisioned first (autonomy provision), so the protection is the real one.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	root, origin, fake, r, item := f.root, f.origin, f.fake, f.r, f.item
	values, wf, dispatched, commit := f.values, f.wf, f.dispatched, f.commit

	// PM, on its schedule, launches develop for the work item as a skill written for gh does; its
	// job holds no write token, so the shim records the launch and pm's apply job dispatches it.
	pm := modelfake.Start(
		modelfake.Turn{Shell: "gh workflow run develop.yml -f ISSUE=" + strconv.Itoa(item)},
		finalResult("Dispatched develop."),
	)
	defer pm.Close()
	pv := values(pm, "schedule", nil)
	if _, ran := r.job(wf("pm"), "agent", pv, false); !ran {
		t.Fatal("the pm job was skipped")
	}
	if err := pm.Err(); err != nil {
		t.Fatalf("pm's model: %v", err)
	}
	if out, ran := r.job(wf("pm"), "apply", pv, false); !ran {
		t.Fatalf("pm's apply job was skipped\n%s", out)
	}
	dev := dispatched("develop.yml")
	if dev.Inputs["ISSUE"] != strconv.Itoa(item) || dev.Branch != "main" {
		t.Fatalf("develop dispatched with %+v", dev)
	}

	// develop commits; its propose job opens the pull request and dispatches the reviewer.
	devModel := modelfake.Start(
		modelfake.Turn{Shell: "echo hello > greeting.txt && git add greeting.txt && git commit -q -m 'Greet the user' && git log -1 --format=%s"},
		finalResult("Committed the greeting."),
	)
	defer devModel.Close()
	dv := values(devModel, "workflow_dispatch", dev.Inputs)
	if out, ran := r.job(wf("develop"), "agent", dv, false); !ran || devModel.Err() != nil {
		t.Fatalf("develop: ran %v, model %v\n%s", ran, devModel.Err(), out)
	}
	if s := devModel.Scripted(); len(s) == 0 || !strings.Contains(s[0].Prompt, "develop") {
		t.Fatal("the skill did not reach the model")
	}
	if _, ran := r.job(wf("develop"), "propose", dv, false); !ran {
		t.Fatal("the propose job was skipped")
	}
	f.gateDispatched() // no human-required path: the gate is success
	pulls := fake.Pulls()
	if len(pulls) != 1 {
		t.Fatalf("pull requests: %v", pulls)
	}
	pr, _ := fake.Issue(pulls[0])
	if pr.Head != effect.BranchPrefix+"develop/"+strconv.Itoa(item) || !strings.Contains(pr.Body, "#"+strconv.Itoa(item)) || pr.Title != "Greet the user" {
		t.Fatalf("pull request %+v", pr)
	}
	if strings.Join(pr.Labels, ",") != "in-review" {
		t.Errorf("labels %v, want in-review", pr.Labels)
	}
	if !fake.AutoMerge(pr.Number) {
		t.Error("auto-merge is not armed")
	}
	head := gitRun(t, root, "--git-dir", origin, "rev-parse", "refs/heads/"+pr.Head)
	if files := gitRun(t, root, "--git-dir", origin, "diff", "--name-only", "main", head); files != "greeting.txt" {
		t.Errorf("the pull request changes %q, want greeting.txt", files)
	}
	rev := dispatched("reviewer.yml")
	if rev.Inputs["PR"] != strconv.Itoa(pr.Number) {
		t.Fatalf("reviewer dispatched with %+v, want PR=%d", rev.Inputs, pr.Number)
	}

	// The reviewer's verdict binds to the head; its review job posts agent-review there.
	verdict, _ := json.Marshal(map[string]any{"verdict": "approve", "summary": "Small and clear.", "headSha": head, "pullRequest": pr.Number})
	revModel := modelfake.Start(modelfake.Turn{JSON: verdict})
	defer revModel.Close()
	rv := values(revModel, "workflow_dispatch", rev.Inputs)
	if out, ran := r.job(wf("reviewer"), "agent", rv, false); !ran || revModel.Err() != nil {
		t.Fatalf("reviewer: ran %v, model %v\n%s", ran, revModel.Err(), out)
	}
	if ok, _ := fake.Mergeable(pr.Number); ok {
		t.Fatal("mergeable before the review job ran")
	}
	// CI, which provisioning requires too, passes on the head (played here).
	ci := exec.Command("curl", "-sSf", "-X", "POST", "-H", "Authorization: Bearer ghs_e2e", fake.URL+"repos/o/r/statuses/"+head, "-d", `{"state":"success","context":"ci"}`)
	if out, err := ci.CombinedOutput(); err != nil {
		t.Fatalf("ci status: %v\n%s", err, out)
	}
	if out, ran := r.job(wf("reviewer"), "review", rv, false); !ran {
		t.Fatalf("the review job was skipped\n%s", out)
	}
	st := fake.Statuses(head)
	if last := st[len(st)-1]; len(st) != 3 || st[0].Context != effect.HumanApprovalContext || st[0].State != "success" || last.Context != effect.StatusContext || last.State != "success" {
		t.Fatalf("statuses on %s: %+v, want human-approval, ci, then agent-review: success", head, st)
	}
	if ok, why := fake.Mergeable(pr.Number); !ok {
		t.Fatalf("not mergeable: %s", why)
	}

	// The branch moves on; the review job runs again with the old verdict: no status.
	work := filepath.Join(root, "again")
	gitRun(t, root, "clone", "--quiet", "--branch", pr.Head, origin, work)
	if err := os.WriteFile(filepath.Join(work, "greeting.txt"), []byte("hello again\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	commit(work, "greet again")
	gitRun(t, work, "push", "--quiet", "origin", "HEAD:"+pr.Head)
	newHead := gitRun(t, root, "--git-dir", origin, "rev-parse", "refs/heads/"+pr.Head)
	if out, ran := r.job(wf("reviewer"), "review", rv, false); !ran || !strings.Contains(out, "discarded") {
		t.Fatalf("the stale review: ran %v\n%s", ran, out)
	}
	if st := fake.Statuses(newHead); len(st) != 0 {
		t.Errorf("a stale verdict posted %+v on %s", st, newHead)
	}
	if ok, _ := fake.Mergeable(pr.Number); ok {
		t.Error("the new head is mergeable without a review")
	}
}

// cliHome is a home directory for one CLI run outside /tmp: codex refuses to create its sandbox
// helper under a temporary directory.
func cliHome(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(agentcli.CacheDir(), "homes")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	home, err := os.MkdirTemp(dir, "home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(home) })
	return home
}

// fleet is a repository where profiles/sdlc is installed and provisioned, on ghfake over a bare
// git repository, with one work item, and a runner for its workflows.
type fleet struct {
	t            *testing.T
	root, origin string
	bin          string
	fake         *ghfake.Server
	r            *runner
	item         int
	values       func(model *modelfake.Server, event string, inputs map[string]string) map[string]string
	wf           func(actor string) string
	dispatched   func(workflow string) ghfake.Run
	commit       func(dir, msg string)
}

func newFleet(t *testing.T) *fleet { return newFleetOf(t, "sdlc", nil) }

// newFleetOf is newFleet with the bundled profile named and the repository's collaborators.
func newFleetOf(t *testing.T, profile string, collaborators map[string]string) *fleet {
	return newFleetWith(t, profile, collaborators, agentclitest.Require(t, "codex"))
}

// newFleetWith is newFleetOf with the agent CLI's path ("": no agent job runs, the trusted jobs
// only).
func newFleetWith(t *testing.T, profile string, collaborators map[string]string, codex string) *fleet {
	return newFleetFrom(t, profileDir(profile), collaborators, codex)
}

// profileDir is a bundled profile's directory, or profile itself when it is an absolute path.
func profileDir(profile string) string {
	if filepath.IsAbs(profile) {
		return profile
	}
	return "../../../profiles/" + profile
}

// newFleetFrom is newFleetWith with the profile's directory.
func newFleetFrom(t *testing.T, dir string, collaborators map[string]string, codex string) *fleet {
	return newFleetMerging(t, dir, collaborators, codex, false)
}

// newFleetMerging is newFleetFrom whose fake merges a pull request armed for auto-merge once
// its protection is satisfied, as GitHub does (merges).
func newFleetMerging(t *testing.T, dir string, collaborators map[string]string, codex string, merges bool) *fleet {
	root := t.TempDir()
	bin := testbin.Path(t)
	ident := []string{"GIT_AUTHOR_NAME=maintainer", "GIT_AUTHOR_EMAIL=m@example.com", "GIT_COMMITTER_NAME=maintainer", "GIT_COMMITTER_EMAIL=m@example.com"}

	// The repository: the fleet installed with autonomy compile and pushed to main.
	origin := filepath.Join(root, "origin.git")
	gitRun(t, root, "init", "--quiet", "--bare", "--initial-branch=main", origin)
	seed := filepath.Join(root, "seed")
	gitRun(t, root, "clone", "--quiet", origin, seed)
	if err := os.WriteFile(filepath.Join(seed, "README.md"), []byte("# app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "compile", dir, "--target", "gh-actions", "--out", seed).CombinedOutput(); err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
	commit := func(dir, msg string) {
		t.Helper()
		gitRun(t, dir, "add", "-A")
		cmd := exec.Command("git", "commit", "--quiet", "-m", msg)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), ident...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("commit: %v\n%s", err, out)
		}
	}
	commit(seed, "install the fleet")
	gitRun(t, seed, "push", "--quiet", "origin", "HEAD:main")
	workflows := map[string][]byte{}
	entries, _ := os.ReadDir(filepath.Join(seed, ".github", "workflows"))
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(seed, ".github", "workflows", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		workflows[".github/workflows/"+e.Name()] = data
	}
	wfs, err := ghfake.WorkflowsFromFiles(workflows)
	if err != nil {
		t.Fatal(err)
	}
	fake, err := ghfake.New(ghfake.Options{Token: "ghs_e2e", GitDir: origin, Workflows: wfs, Collaborators: collaborators, AutoMergeMerges: merges})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	item := fake.AddIssue("Greet the user", "Add greeting.txt saying hello.")
	// The maintainer provisions the repository: main protected, auto-merge allowed.
	prov := exec.Command(bin, "provision", dir, "--repo", "o/r")
	prov.Env = append(os.Environ(), "GH_TOKEN=ghs_e2e", "GITHUB_API_URL="+fake.URL)
	if out, err := prov.CombinedOutput(); err != nil {
		t.Fatalf("provision: %v\n%s", err, out)
	}

	home, path := t.TempDir(), os.Getenv("PATH")
	if codex != "" {
		home, path = cliHome(t), filepath.Dir(codex)+string(os.PathListSeparator)+path
	}
	r := &runner{t: t, origin: origin, artifacts: map[string]string{}, autonomy: bin, base: []string{
		"PATH=" + path,
		"HOME=" + home, "GITHUB_ACTIONS=true", "CI=true", "RUNNER_OS=Linux",
		"GITHUB_REPOSITORY=o/r", "GITHUB_API_URL=" + strings.TrimSuffix(fake.URL, "/"), "GITHUB_SERVER_URL=https://github.com",
		"GITHUB_RUN_ID=4242", "AUTONOMY_REMOTE=" + origin, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
	}}
	main := func() string { return gitRun(t, root, "--git-dir", origin, "rev-parse", "refs/heads/main") }
	values := func(model *modelfake.Server, event string, inputs map[string]string) map[string]string {
		url := ""
		if model != nil {
			url = model.OpenAIBaseURL()
		}
		v := map[string]string{
			"github.token": "ghs_e2e", "secrets.OPENAI_API_KEY": "sk-e2e", "vars.AUTONOMY_MODEL_URL": url,
			"github.event_name": event, "github.ref": "refs/heads/main", "github.event.repository.default_branch": "main",
			"github.sha": main(), "github.run_id": "4242",
		}
		for k, x := range inputs {
			v["inputs."+k] = x
		}
		return v
	}
	wf := func(actor string) string { return filepath.Join(seed, ".github", "workflows", actor+".yml") }
	dispatched := func(workflow string) ghfake.Run {
		t.Helper()
		var last *ghfake.Run
		for _, run := range fake.Runs() {
			if run.Workflow == workflow {
				run := run
				last = &run
			}
		}
		if last == nil {
			t.Fatalf("nothing dispatched %s; runs: %+v", workflow, fake.Runs())
		}
		return *last
	}

	return &fleet{t: t, root: root, origin: origin, bin: bin, fake: fake, r: r, item: item, values: values, wf: wf, dispatched: dispatched, commit: commit}
}

// TestEndToEndRefusals: through the generated workflows, the propose job refuses a scoped
// proposer's change outside its scope (the strategist, on its schedule: said in the log) and a
// change to a workflow (said on the work item), pushing nothing; the review job refuses a verdict
// that fails the contract, posting nothing.
func TestEndToEndRefusals(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	agentThenPropose := func(actor, event string, inputs map[string]string, shell string) string {
		t.Helper()
		model := modelfake.Start(modelfake.Turn{Shell: shell}, finalResult("Done."))
		defer model.Close()
		v := f.values(model, event, inputs)
		if out, ran := f.r.job(f.wf(actor), "agent", v, false); !ran || model.Err() != nil {
			t.Fatalf("%s: ran %v, model %v\n%s", actor, ran, model.Err(), out)
		}
		out, _ := f.r.job(f.wf(actor), "propose", v, true)
		return out
	}
	out := agentThenPropose("strategist", "schedule", nil,
		"echo '# next' > docs/ROADMAP.md && mkdir -p src && echo 'package x' > src/x.go && git add -A && git commit -q -m roadmap")
	if !strings.Contains(out, "may propose changes to docs/ROADMAP.md only") || !strings.Contains(out, "`src/x.go`") {
		t.Errorf("the strategist's out-of-scope change:\n%s", out)
	}
	item := strconv.Itoa(f.item)
	agentThenPropose("develop", "workflow_dispatch", map[string]string{"ISSUE": item},
		"echo 'name: x' > .github/workflows/x.yml && git add -A && git commit -q -m ci")
	if is, _ := f.fake.Issue(f.item); len(is.Comments) != 1 || !strings.Contains(is.Comments[0], "`.github/workflows/x.yml`") {
		t.Errorf("the work item's comments: %q", is.Comments)
	}
	if pulls := f.fake.Pulls(); len(pulls) != 0 {
		t.Fatalf("pull requests opened: %v", pulls)
	}
	if branches := gitRun(t, f.root, "--git-dir", f.origin, "branch", "--list", "autonomy/*"); branches != "" {
		t.Errorf("branches pushed: %s", branches)
	}

	// A verdict without a summary, for a pull request opened by hand.
	work := filepath.Join(f.root, "human")
	gitRun(t, f.root, "clone", "--quiet", f.origin, work)
	if err := os.WriteFile(filepath.Join(work, "x.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.commit(work, "by hand")
	gitRun(t, work, "push", "--quiet", "origin", "HEAD:refs/heads/feature")
	head := gitRun(t, work, "rev-parse", "HEAD")
	pr := createPull(t, f, "feature")
	verdict, _ := json.Marshal(map[string]any{"verdict": "approve", "headSha": head})
	model := modelfake.Start(modelfake.Turn{JSON: verdict})
	defer model.Close()
	v := f.values(model, "workflow_dispatch", map[string]string{"PR": strconv.Itoa(pr)})
	if out, ran := f.r.job(f.wf("reviewer"), "agent", v, false); !ran {
		t.Fatalf("reviewer skipped\n%s", out)
	}
	out, _ = f.r.job(f.wf("reviewer"), "review", v, true)
	if !strings.Contains(out, "missing property 'summary'") {
		t.Errorf("the refusal does not name the missing summary:\n%s", out)
	}
	if st := f.fake.Statuses(head); len(st) != 0 {
		t.Errorf("statuses posted: %+v", st)
	}
}

// createPull opens a pull request from branch into main through the fake's API.
func createPull(t *testing.T, f *fleet, branch string) int {
	t.Helper()
	out, err := exec.Command("curl", "-sSf", "-X", "POST", "-H", "Authorization: Bearer ghs_e2e", f.fake.URL+"repos/o/r/pulls",
		"-d", `{"title":"by hand","head":"`+branch+`","base":"main"}`).CombinedOutput()
	if err != nil {
		t.Fatalf("create pull: %v\n%s", err, out)
	}
	var pr struct{ Number int }
	if err := json.Unmarshal(out, &pr); err != nil {
		t.Fatal(err)
	}
	return pr.Number
}

// finalResult is the scripted model ending with its result (autonomy.result.v1) as its final
// message, which the agent job exports beside its safe outputs for the apply job to verify: the
// way a session whose CLI offers its MCP tools as a namespace the scripted model cannot call
// into (codex with gpt-5-codex) delivers it.
func finalResult(summary string) modelfake.Turn {
	text, _ := json.Marshal(map[string]any{"status": "done", "summary": summary})
	return modelfake.Turn{Text: string(text)}
}
