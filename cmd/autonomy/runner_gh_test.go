//go:build unix

package main

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/ir"
)

const ghTestToken = "ghs_jobtoken"

// ghCheckout compiles profiles/sdlc for gh-actions with the binary, as the repository's
// checkout holds it, and serves its workflows from a fake GitHub API.
func ghCheckout(t *testing.T, opts ghfake.Options) (string, *ghfake.Server) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "checkout")
	if out, err := exec.Command(autonomyBin(t), "compile", filepath.Join("..", "..", "profiles", "sdlc"), "--target", "gh-actions", "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
	files := map[string][]byte{}
	ents, err := os.ReadDir(filepath.Join(dir, ".github", "workflows"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, ".github", "workflows", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[".github/workflows/"+e.Name()] = data
	}
	wfs, err := ghfake.WorkflowsFromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	opts.Token, opts.Workflows = ghTestToken, wfs
	srv, err := ghfake.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return dir, srv
}

var ghExpr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// jobEnv is the environment of actor's model step as GitHub gives it: what GitHub sets in
// every job, the agent job's env and the env of the step that runs the agent, read from the
// compiled workflow, with its expressions evaluated as GitHub would in this fake repository
// (the job token for github.token; secrets, variables, inputs and event fields unset: a
// scheduled run).
func jobEnv(t *testing.T, dir, actor string, srv *ghfake.Server) []string {
	t.Helper()
	var env map[string]string
	for _, st := range workflowSteps(t, filepath.Join(dir, ".github", "workflows"), actor+".yml") {
		if st.job == "agent" && st.name == "Run "+actor {
			env = st.env
		}
	}
	if env == nil {
		t.Fatalf("%s.yml: the agent job has no step running %s", actor, actor)
	}
	out := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), cliEnv + "=1",
		"GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=o/r", "GITHUB_API_URL=" + strings.TrimSuffix(srv.URL, "/"),
		"GITHUB_WORKSPACE=" + dir, "GITHUB_WORKFLOW_REF=o/r/.github/workflows/" + actor + ".yml@refs/heads/main",
	}
	for k, v := range env {
		v = ghExpr.ReplaceAllStringFunc(v, func(e string) string {
			switch x := ghExpr.FindStringSubmatch(e)[1]; {
			case x == "github.token":
				return ghTestToken
			case strings.HasPrefix(x, "secrets.") || strings.HasPrefix(x, "vars.") || strings.HasPrefix(x, "inputs.") || strings.HasPrefix(x, "github.event."):
				return ""
			default:
				t.Fatalf("%s.yml: env %s=%s: an expression this test does not evaluate", actor, k, v)
			}
			return ""
		})
		out = append(out, k+"="+v)
	}
	return out
}

// ghCLI runs the binary in the checkout with exactly env.
func ghCLI(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(autonomyBin(t), args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// TestGitHubRunnerFromAJob: a PM session launches develop through the runner with the env its
// compiled job declares; the run id comes back at once, list shows it, get from a new process
// returns its params, cancel cancels it. An agent without agent:launch is refused, even naming
// itself the PM, and a scoped agent:launch launches only its actor.
func TestGitHubRunnerFromAJob(t *testing.T) {
	t.Parallel()
	dir, srv := ghCheckout(t, ghfake.Options{})
	pm := jobEnv(t, dir, "pm", srv)
	params := ir.LaunchParams{"ISSUE": "42 \"it's\" $(id) ${{ github.token }}"}
	pj, _ := json.Marshal(params)

	out, errOut, code := ghCLI(t, dir, pm, "runner", "--target", "gh-actions", "launch", "develop", "--params-json", string(pj))
	if code != 0 {
		t.Fatalf("launch: exit %d: %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	runs := srv.Runs()
	if len(runs) != 1 || strconv.FormatInt(runs[0].ID, 10) != id || runs[0].Workflow != "develop.yml" || runs[0].Inputs["ISSUE"] != params["ISSUE"] {
		t.Fatalf("launch printed %q; the fake has %+v", out, runs)
	}
	for _, q := range srv.Requests() {
		if strings.HasSuffix(q.Path, "/runs") {
			t.Errorf("the launch polled %s: the dispatch named its run", q.Path)
		}
	}

	out, errOut, code = ghCLI(t, dir, pm, "runner", "--target", "gh-actions", "list", "--format", "json")
	var listed struct{ Sessions []ir.Session }
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed.Sessions) != 1 || listed.Sessions[0].ID != id || !maps.Equal(listed.Sessions[0].Params, params) {
		t.Fatalf("list: exit %d: %s%s", code, out, errOut)
	}

	out, errOut, code = ghCLI(t, dir, pm, "runner", "--target", "gh-actions", "get", id, "--format", "json")
	var got ir.Session
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Agent != "develop" || got.Status != ir.Running || !maps.Equal(got.Params, params) {
		t.Fatalf("get from a new process: exit %d: %s%s", code, out, errOut)
	}

	// pm holds no agent:cancel: its cancel is refused; the operator (no actor) may.
	_, errOut, code = ghCLI(t, dir, pm, "runner", "--target", "gh-actions", "cancel", id)
	if code != 1 || !strings.Contains(errOut, "agent:cancel") {
		t.Fatalf("pm's cancel: exit %d: %s", code, errOut)
	}
	operator := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), cliEnv + "=1", "GITHUB_REPOSITORY=o/r", "GITHUB_API_URL=" + srv.URL, "GH_TOKEN=" + ghTestToken}
	out, errOut, code = ghCLI(t, dir, operator, "runner", "--target", "gh-actions", "cancel", id)
	if run, _ := srv.Run(runs[0].ID); code != 0 || strings.TrimSpace(out) != id+" cancelled" || !run.CancelRequested {
		t.Fatalf("cancel: exit %d: %s%s", code, out, errOut)
	}
	if out, _, _ = ghCLI(t, dir, pm, "runner", "--target", "gh-actions", "list"); strings.Contains(out, id) {
		t.Errorf("list after cancel still shows %s:\n%s", id, out)
	}

	// draft holds no agent:launch, whatever its token allows; naming itself pm changes nothing.
	draft := jobEnv(t, dir, "draft", srv)
	for _, env := range [][]string{draft, append(draft, "AUTONOMY_ACTOR=pm")} {
		_, errOut, code = ghCLI(t, dir, env, "runner", "--substrate", "gh-actions", "launch", "develop", "--param", "ISSUE=1")
		if code != 1 || !strings.Contains(errOut, "denied") {
			t.Errorf("draft's launch: exit %d: %s", code, errOut)
		}
	}
	if !strings.Contains(errOut, `actor "draft"`) {
		t.Errorf("the refusal of draft posing as pm does not name draft: %s", errOut)
	}
	// strategist's agent:launch@planner launches planner only. (On GitHub its job token holds no
	// actions: write, which GitHub cannot narrow to one workflow: the fake's token stands in for
	// a token that allows everything, and the runner still refuses develop.)
	strat := jobEnv(t, dir, "strategist", srv)
	if _, errOut, code = ghCLI(t, dir, strat, "runner", "--substrate", "gh-actions", "launch", "develop", "--ref", "9"); code != 1 || !strings.Contains(errOut, "scoped") {
		t.Errorf("strategist's launch of develop: exit %d: %s", code, errOut)
	}
	if _, errOut, code = ghCLI(t, dir, strat, "runner", "--substrate", "gh-actions", "launch", "planner"); code != 0 {
		t.Errorf("strategist's launch of planner: exit %d: %s", code, errOut)
	}
	if n := len(srv.Runs()); n != 2 {
		t.Errorf("%d runs, want 2: refused launches dispatched nothing", n)
	}
}

// TestGitHubRunnerFromAJobWithout200: a server answering the dispatch with 204 (no run details)
// still launches, through the correlation run-name, and get from a new process returns the
// params.
func TestGitHubRunnerFromAJobWithout200(t *testing.T) {
	t.Parallel()
	dir, srv := ghCheckout(t, ghfake.Options{DispatchNoContent: true, VisibleAfterLists: 1})
	pm := jobEnv(t, dir, "pm", srv)
	out, errOut, code := ghCLI(t, dir, pm, "runner", "--substrate", "gh-actions", "launch", "develop", "--ref", "77")
	id := strings.TrimSpace(out)
	if runs := srv.Runs(); code != 0 || len(runs) != 1 || strconv.FormatInt(runs[0].ID, 10) != id || runs[0].Inputs["ISSUE"] != "77" {
		t.Fatalf("launch: exit %d: %s%s; runs %+v", code, out, errOut, runs)
	}
	out, errOut, code = ghCLI(t, dir, pm, "runner", "--substrate", "gh-actions", "get", id)
	if code != 0 || !strings.Contains(out, `param:     ISSUE="77"`) {
		t.Fatalf("get: exit %d: %s%s", code, out, errOut)
	}
}

// TestGitHubRunnerRefusals: bad input is refused with its fix and the right exit code.
func TestGitHubRunnerRefusals(t *testing.T) {
	dir, srv := ghCheckout(t, ghfake.Options{})
	pm := jobEnv(t, dir, "pm", srv)
	for _, tc := range []struct {
		env  []string
		args []string
		code int
		want string
	}{
		{pm, []string{"launch", "develop", "--params-json", "[1]"}, 2, "--params-json"},
		{pm, []string{"launch", "develop", "--param", "ISSUE=" + strings.Repeat("x", 600)}, 2, "more than the 512"},
		{pm, []string{"launch", "nobody"}, 1, "not an actor"},
		{pm, []string{"update", "1", "--status", "paused"}, 2, "not on gh-actions"},
		{pm, []string{"list", "--all"}, 2, "--all"},
		{pm, []string{"get", "123"}, 1, "no session 123"},
		{append(pm, "AUTONOMY_ACTOR=ghost"), []string{"list"}, 1, `AUTONOMY_ACTOR=ghost, but this job runs the workflow of actor "pm"`},
		{[]string{"PATH=" + os.Getenv("PATH"), cliEnv + "=1", "GITHUB_REPOSITORY=o/r", "GH_TOKEN=x", "AUTONOMY_ACTOR=ghost"}, []string{"list"}, 1, "names no actor"},
		{[]string{"PATH=" + os.Getenv("PATH"), cliEnv + "=1", "GITHUB_REPOSITORY=o/r", "GH_TOKEN=x"}, []string{"--dir", t.TempDir(), "list"}, 2, "no gh-actions installation"},
	} {
		_, errOut, code := ghCLI(t, dir, tc.env, append([]string{"runner", "--substrate", "gh-actions"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want %d saying %q: %s", tc.args, code, tc.code, tc.want, errOut)
		}
	}
	if n := len(srv.Runs()); n != 0 {
		t.Errorf("refused launches dispatched %d runs", n)
	}
}
