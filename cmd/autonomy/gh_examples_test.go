//go:build unix

package main

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/internal/testfs"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// githubDefaults are the variables GitHub's runner sets in every job, which a workflow does not
// declare.
var githubDefaults = []string{"GITHUB_REPOSITORY", "GITHUB_API_URL", "GITHUB_SERVER_URL", "GITHUB_RUN_ID", "GITHUB_SHA"}

// scriptSet is jobEnvOf's value of a variable the step's script exports: any value.
const scriptSet = "${{ set by the step's script }}"

// jobEnvOf parses the workflows under dir and returns the environment of the job whose step runs
// "autonomy gh VERB" (of actor, when it is not ""): the job's env with the step's over it.
func jobEnvOf(t *testing.T, dir, verb, actor string) map[string]string {
	t.Helper()
	env, _ := jobStepOf(t, dir, verb, actor)
	return env
}

// jobStepOf is jobEnvOf with the step's script.
func jobStepOf(t *testing.T, dir, verb, actor string) (map[string]string, string) {
	t.Helper()
	exported := regexp.MustCompile(`(?m)^\s*export ([A-Z_][A-Z0-9_]*)=`)
	runs := regexp.MustCompile(`"\$AUTONOMY_BIN" gh ` + regexp.QuoteMeta(verb) + `(\s|$)`)
	for _, st := range workflowSteps(t, dir, "") {
		if !runs.MatchString(st.run) || actor != "" && st.jobEnv["AUTONOMY_ACTOR"] != actor {
			continue
		}
		for _, m := range exported.FindAllStringSubmatch(st.run, -1) {
			st.env[m[1]] = scriptSet
		}
		return st.env, st.run
	}
	t.Fatalf("no job of the workflows in %s runs autonomy gh %s (of actor %q)", dir, verb, actor)
	return nil, ""
}

// workflowStep is a step of a job of a compiled workflow: its file, job and name, its script, the
// job's env, and env, the job's env with the step's over it.
type workflowStep struct {
	file, job, name, run string
	jobEnv, env          map[string]string
}

// workflowSteps parses the workflow files in dir (only the file name, when it is not "") and
// returns the steps of their jobs, file by file and job by job in name order.
func workflowSteps(t *testing.T, dir, name string) []workflowStep {
	t.Helper()
	names := []string{name}
	if name == "" {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		names = names[:0]
		for _, e := range entries {
			names = append(names, e.Name())
		}
	}
	var out []workflowStep
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			Jobs map[string]struct {
				Env   map[string]string `yaml:"env"`
				Steps []struct {
					Name string            `yaml:"name"`
					Run  string            `yaml:"run"`
					Env  map[string]string `yaml:"env"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(data, &wf); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		for _, job := range slices.Sorted(maps.Keys(wf.Jobs)) {
			j := wf.Jobs[job]
			for _, st := range j.Steps {
				env := map[string]string{}
				maps.Copy(env, j.Env)
				maps.Copy(env, st.Env)
				out = append(out, workflowStep{file: n, job: job, name: st.Name, run: st.Run, jobEnv: j.Env, env: env})
			}
		}
	}
	return out
}

// ghExample runs an example of a verb the generated jobs run (autonomy gh VERB) as its job runs
// it: in a checkout of the sdlc fleet compiled for gh-actions, against a simulated GitHub API
// (GITHUB_API_URL, as GitHub's runner sets it; … stands for the job's token). Every variable the
// example sets is one the job that runs the verb sets (parsed from the compiled workflows), or
// one GitHub's runner sets, with the job's value where the job gives a literal one. The verb's
// effect on the API is then checked.
func ghExample(t *testing.T, line string, ex example) {
	t.Helper()
	verb := ex.args[1]
	switch verb {
	case "mcp":
		ghMCPExample(t, line, ex) // gh_stdin_examples_test.go
		return
	case "jail":
		ghJailExample(t, line, ex) // gh_stdin_examples_test.go
		return
	case "resume":
		ghResumeExample(t, line, ex) // gh_resume_examples_test.go
		return
	}
	profile := "profiles/sdlc"
	switch verb {
	case "gate":
		profile = "profiles/release-gate" // the fleet with an approval step
	case "ask":
		profile = "profiles/steps-triage" // the fleet whose playbook asks a person
	}
	if code, _, errOut := run(t, "compile", profile, "--target", "gh-actions", "--out", "."); code != 0 {
		t.Fatalf("setup compile: exit %d\n%s", code, errOut)
	}
	actor := ""
	for _, kv := range ex.env {
		if k, v, _ := strings.Cut(kv, "="); k == "AUTONOMY_ACTOR" {
			actor = v
		}
	}
	jobEnv := jobEnvOf(t, filepath.Join(".github", "workflows"), verb, actor)
	runAt := -1
	for k, v := range jobEnv {
		if v != scriptSet {
			t.Setenv(k, "") // only what the example sets
		}
	}
	for i, kv := range ex.env {
		k, v, _ := strings.Cut(kv, "=")
		want, declared := jobEnv[k]
		switch {
		case !declared && !slices.Contains(githubDefaults, k):
			t.Errorf("%s sets %s, which the job running autonomy gh %s does not (it sets %v)", line, k, verb, slices.Sorted(maps.Keys(jobEnv)))
		case declared && !strings.Contains(want, "${{") && want != v:
			t.Errorf("%s sets %s=%q; the job sets %q", line, k, v, want)
		}
		if k == "GH_TOKEN" && v == "…" {
			ex.env[i] = "GH_TOKEN=t"
		}
		if k == "GITHUB_RUN_ID" && v == "…" {
			runAt = i // the run, once the fake has it
		}
	}
	for k, v := range jobEnv {
		if strings.HasPrefix(k, "GIT_") && !strings.Contains(v, "${{") {
			t.Setenv(k, v) // the commit identity the job gives git
		}
	}
	fake, origin := ghCodeHost(t)
	for fake.AddIssue("an item", "") < 42 {
	}
	comments := func() []string { is, _ := fake.Issue(42); return is.Comments }
	last := func() string {
		c := comments()
		if len(c) == 0 {
			return ""
		}
		return c[len(c)-1]
	}
	for i, kv := range ex.env {
		if kv == "GITHUB_SHA=…" {
			ex.env[i] = "GITHUB_SHA=" + gitIn(t, ".", "rev-parse", "HEAD") // the installation's commit
		}
	}
	var head string // the head of pull request 51
	switch verb {
	case "sweep":
		// An ask on #42, posted two hours ago: past the SLA.
		ghEngage(t, time.Now().Add(-2*time.Hour))
	case "review", "human-gate":
		head = ghPull51(t, fake, origin)
		writeIn(t, ".", "verdict.json", `{"verdict": "approve", "summary": "reads well", "headSha": "`+head+`"}`)
	case "gate":
		// The run, held for the environment's required reviewer, who approved it.
		name := jobEnv["AUTONOMY_ENVIRONMENT"]
		fake.SetEnvironment(ghfake.Environment{Name: name, Reviewers: []int64{1}})
		id, err := fake.AddRun("releaser.yml", "workflow_dispatch")
		if err != nil {
			t.Fatal(err)
		}
		if err := fake.Review(id, "ada", "approved", "", name); err != nil {
			t.Fatal(err)
		}
		if runAt < 0 {
			t.Fatalf("%s names no run (GITHUB_RUN_ID=…)", line)
		}
		ex.env[runAt] = "GITHUB_RUN_ID=" + strconv.FormatInt(id, 10)
	case "ask":
		// The envelope of the agent job's playbook run, waiting at step 3 for a person.
		writeIn(t, ".", "envelope.json", `{"ok": true, "status": "needs_input", "output": {"steps": [], "outputs": {}},
  "requiresInput": {"step": "3", "kind": "select", "prompt": "Which label fits?", "options": ["bug", "feature"], "resumeToken": "rt_secret"}}`)
	case "apply":
		// The safe outputs the pm's MCP server recorded in its run: a comment on #42.
		writeIn(t, ".", "outputs.jsonl", `{"tool":"comment","actor":"pm","session":"7","input":{"item":"42","body":"Triaged: ready for develop."}}`+"\n"+
			`{"tool":"submit_result","actor":"pm","session":"7","input":{"status":"done","summary":"Triaged #42."}}`+"\n")
	case "shim":
		if ex.args[2] == "exec" {
			if code, _, errOut := run(t, "gh", "shim", "install", "shims"); code != 0 {
				t.Fatalf("setup shim install: exit %d\n%s", code, errOut)
			}
		}
	case "propose":
		// The agent's commits on the checked-out main, bundled as its job exports them; the job
		// pushes to GitHub's git (here the code host's repository, AUTONOMY_REMOTE).
		c := filepath.Join(t.TempDir(), "agent")
		gitIn(t, "", "clone", "-q", origin, c)
		base := gitIn(t, c, "rev-parse", "HEAD")
		writeIn(t, c, "src/feature.go", "package src\n")
		gitIn(t, c, "add", "-A")
		gitIn(t, c, "commit", "-qm", "develop: a feature")
		gitIn(t, c, "bundle", "create", "-q", filepath.Join(mustGetwd(t), "commits.bundle"), base+"..HEAD")
		t.Setenv("AUTONOMY_REMOTE", origin)
	}
	before := len(comments())
	code, out, errOut := runExample(t, line, ex)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", line, code, out, errOut)
	}
	switch verb {
	case "engage":
		if !strings.Contains(last(), "May the release go out today?") || !strings.Contains(last(), "<!-- autonomy:ask actor=maintainer") ||
			strings.Join(fake.Assignees(42), ",") != "ada,bob" {
			t.Errorf("%s: the ask on #42: %q, assignees %v", line, last(), fake.Assignees(42))
		}
	case "sweep":
		if len(comments()) != before+1 || !strings.Contains(last(), "<!-- autonomy:escalation") {
			t.Errorf("%s escalated nothing: %q", line, last())
		}
	case "control":
		if len(comments()) != before+1 || !strings.Contains(last(), "|") {
			t.Errorf("%s answered no status on #42: %q", line, last())
		}
	case "paused":
		// Not paused: exit 0. Paused: exit 1, saying so.
		if err := fake.Label(42, "ada", "autonomy:paused"); err != nil {
			t.Fatal(err)
		}
		if code, out, errOut := runExample(t, line, ex); code != 1 || !strings.Contains(out+errOut, "#42 is paused") {
			t.Errorf("%s on a paused #42: exit %d\n%s%s", line, code, out, errOut)
		}
	case "propose":
		var pr ghfake.Issue
		for _, n := range fake.Pulls() {
			pr, _ = fake.Issue(n)
		}
		runs := fake.Runs()
		if pr.Head != "autonomy/develop/42" || len(runs) == 0 || !slices.Contains(runWorkflows(runs), "reviewer.yml") {
			t.Errorf("%s: pull request %+v, dispatched %+v", line, pr, runs)
		}
	case "shim":
		ghShimEffect(t, line, ex, last)
	case "ask":
		if !strings.Contains(last(), "Which label fits?") || !strings.Contains(last(), "<!-- autonomy:ask actor=triage") || strings.Contains(last()+out, "rt_secret") {
			t.Errorf("%s: the ask on #42: %q\n%s", line, last(), out)
		}
	case "apply":
		if last() != "Triaged: ready for develop." {
			t.Errorf("%s: the last comment on #42 is %q\n%s", line, last(), out)
		}
	case "gate":
		// Approved: exit 0. Without the approval (another run): refused.
		id, _ := fake.AddRun("releaser.yml", "workflow_dispatch")
		ex.env[runAt] = "GITHUB_RUN_ID=" + strconv.FormatInt(id, 10)
		if code, out, errOut := runExample(t, line, ex); code != 1 || !strings.Contains(out, "holds no approval") {
			t.Errorf("%s for a run nobody approved: exit %d\n%s%s", line, code, out, errOut)
		}
	case "review", "human-gate":
		want := map[string]string{"review": effect.StatusContext, "human-gate": effect.HumanApprovalContext}[verb]
		if st := fake.Statuses(head); len(st) != 1 || st[0].Context != want || st[0].State != "success" {
			t.Errorf("%s: statuses of the head %+v, want %s success", line, st, want)
		}
	default:
		t.Errorf("%s: no check of autonomy gh %s's effect", line, verb)
	}
}

// ghCodeHost commits the installation in the workspace to main, makes it the code host's
// repository, and serves it with the installation's workflows from a simulated GitHub API
// (GITHUB_API_URL points at it).
func ghCodeHost(t *testing.T) (*ghfake.Server, string) {
	t.Helper()
	gitIn(t, ".", "add", "-A")
	gitIn(t, ".", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "install")
	gitIn(t, ".", "branch", "-M", "main")
	origin := filepath.Join(t.TempDir(), "origin.git")
	gitIn(t, "", "clone", "-q", "--bare", ".", origin)
	files := map[string][]byte{}
	entries, err := os.ReadDir(filepath.Join(".github", "workflows"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(".github", "workflows", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[".github/workflows/"+e.Name()] = data
	}
	wfs, err := ghfake.WorkflowsFromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	fake, err := ghfake.New(ghfake.Options{Owner: "o", Repo: "r", Token: "t", GitDir: origin, Workflows: wfs,
		Collaborators: map[string]string{"ada": "admin", "bob": "admin", "dev": "write"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	t.Setenv("GITHUB_API_URL", fake.URL)
	return fake, origin
}

// ghPull51 opens pull request 51 from a branch of origin that changes one ordinary file, and
// returns its head.
func ghPull51(t *testing.T, fake *ghfake.Server, origin string) string {
	t.Helper()
	c := filepath.Join(t.TempDir(), "dev")
	gitIn(t, "", "clone", "-q", origin, c)
	gitIn(t, c, "checkout", "-qb", "feature")
	writeIn(t, c, "src/change.go", "package src\n")
	gitIn(t, c, "add", "-A")
	gitIn(t, c, "-c", "user.name=d", "-c", "user.email=d@example.com", "commit", "-qm", "a change")
	gitIn(t, c, "push", "-q", "origin", "feature")
	for fake.AddIssue("an item", "") < 50 {
	}
	if n, err := fake.OpenPull("dev", "a change", "feature", "main"); err != nil || n != 51 {
		t.Fatalf("pull request %d: %v", n, err)
	}
	return gitIn(t, c, "rev-parse", "HEAD")
}

// gitIn runs git in dir ("" for the current directory) and returns its trimmed output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return testfs.Run(t, dir, append([]string{"git"}, args...)...)
}

// writeIn writes content to dir/name, making its directories.
func writeIn(t *testing.T, dir, name, content string) {
	t.Helper()
	testfs.WriteFile(t, dir, name, content)
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

func runWorkflows(runs []ghfake.Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Workflow)
	}
	return out
}

// ghEngage posts an ask of the maintainer on #42 at the time at, as the engage job does.
func ghEngage(t *testing.T, at time.Time) {
	t.Helper()
	for k, v := range map[string]string{"GITHUB_REPOSITORY": "o/r", "GH_TOKEN": "t", "AUTONOMY_POLICY": ".autonomy/policy.json",
		"AUTONOMY_ACTOR": "maintainer", "AUTONOMY_SUBJECT": "42", "AUTONOMY_NOW": at.UTC().Format(time.RFC3339)} {
		t.Setenv(k, v)
	}
	if code, out, errOut := run(t, "gh", "engage"); code != 0 {
		t.Fatalf("setup engage: exit %d\n%s%s", code, out, errOut)
	}
	for _, k := range []string{"AUTONOMY_ACTOR", "AUTONOMY_SUBJECT", "AUTONOMY_NOW"} {
		t.Setenv(k, "")
	}
}

// playbookStepExample runs the example of autonomy playbook step as the first step of the
// releaser's job runs it: its AUTONOMY_PLAYBOOK_STEP is the one the compiled release-gate
// workflow passes that step (equal as JSON), and the step's record and data are what it ran.
func playbookStepExample(t *testing.T, line string, ex example) {
	t.Helper()
	if code, _, errOut := run(t, "compile", "profiles/release-gate", "--target", "gh-actions", "--out", "."); code != 0 {
		t.Fatalf("setup compile: exit %d\n%s", code, errOut)
	}
	var given map[string]any
	for _, kv := range ex.env {
		if k, v, _ := strings.Cut(kv, "="); k == "AUTONOMY_PLAYBOOK_STEP" {
			if err := json.Unmarshal([]byte(v), &given); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(".github", "workflows", "releaser.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Env map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, j := range wf.Jobs {
		for _, st := range j.Steps {
			var step map[string]any
			if json.Unmarshal([]byte(st.Env["AUTONOMY_PLAYBOOK_STEP"]), &step) == nil && step["id"] == given["id"] {
				found = reflect.DeepEqual(step, given)
				if !found {
					t.Errorf("%s: the workflow passes step %v as %s", line, given["id"], st.Env["AUTONOMY_PLAYBOOK_STEP"])
				}
			}
		}
	}
	if !found {
		t.Fatalf("%s: releaser.yml passes no such step", line)
	}
	t.Setenv("GITHUB_OUTPUT", "")
	t.Setenv("AUTONOMY_PLAYBOOK_DATA", "")
	code, out, errOut := runExample(t, line, ex)
	var rec struct{ ID, Status string }
	if code != 0 || json.Unmarshal([]byte(out), &rec) != nil || rec.ID != "changes" {
		t.Fatalf("%s: exit %d, record %q\n%s", line, code, out, errOut)
	}
	kept, err := os.ReadFile("data.json")
	if err != nil || !strings.Contains(string(kept), "profiles") { // the workspace's one commit
		t.Errorf("%s: the data kept: %s (%v)", line, kept, err)
	}
}

// modelProxyExamples runs the examples of gh model-proxy and gh model-usage in order, as the agent
// job runs them before and after its agent, with only variables that step sets (parsed from the
// compiled sdlc workflows) or GitHub's runner sets, against an upstream of the test's
// (AUTONOMY_MODEL_URL, the job's repository variable): the proxy's URL and a placeholder key, never
// the credential, reach $GITHUB_ENV; the proxy holds the credential; the usage report stops it.
func modelProxyExamples(t *testing.T, template string, lines map[string]string) {
	start, stop := lines["model-proxy"], lines["model-usage"]
	if start == "" || stop == "" {
		t.Fatalf("the model proxy's examples: %v", lines)
	}
	ws := workspace(t, template)
	if code, _, errOut := run(t, "compile", "profiles/sdlc", "--target", "gh-actions", "--out", "."); code != 0 {
		t.Fatalf("setup compile: exit %d\n%s", code, errOut)
	}
	var gotKey string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotKey = r.Header.Get("Authorization")
		http.Error(w, "the test's upstream answers nothing", http.StatusTeapot)
	}))
	t.Cleanup(upstream.Close)
	runnerSet := []string{"RUNNER_TEMP", "GITHUB_ENV", "GITHUB_STEP_SUMMARY"}
	for _, line := range []string{start, stop} {
		ex := parseExample(t, line)
		jobEnv := jobEnvOf(t, filepath.Join(".github", "workflows"), ex.args[1], "develop")
		checkJobEnv(t, line, "the step running autonomy gh "+ex.args[1], ex, jobEnv, runnerSet) // gh_stdin_examples_test.go
		if err := os.MkdirAll(filepath.Join(ws, "job"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("AUTONOMY_MODEL_URL", upstream.URL+"/v1")
		code, out, errOut := runExample(t, line, ex)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", line, code, out, errOut)
		}
		if line != start {
			continue
		}
		env, err := os.ReadFile(filepath.Join(ws, "job", "env"))
		m := regexp.MustCompile(`(?m)^AUTONOMY_MODEL_URL=(http://127\.0\.0\.1:\d+\S*)$`).FindStringSubmatch(string(env))
		if err != nil || m == nil || strings.Contains(string(env), "sk-…") || !strings.Contains(string(env), "OPENAI_API_KEY=") {
			t.Fatalf("%s: $GITHUB_ENV holds %q (%v), want the proxy's URL and a placeholder key", line, env, err)
		}
		placeholder := regexp.MustCompile(`(?m)^OPENAI_API_KEY=(.*)$`).FindStringSubmatch(string(env))[1]
		req, _ := http.NewRequest(http.MethodPost, m[1]+"/responses", strings.NewReader(`{"model":"gpt-5-codex","input":"hi"}`))
		req.Header.Set("Authorization", "Bearer "+placeholder)
		req.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		if gotKey != "Bearer sk-…" {
			t.Errorf("the upstream got the credential %q, want the one in OPENAI_API_KEY", gotKey)
		}
	}
	if sum, err := os.ReadFile(filepath.Join(ws, "job", "summary.md")); err != nil || !strings.Contains(string(sum), "requests") {
		t.Errorf("the step summary: %q (%v)", sum, err)
	}
}

// ghShimEffect checks what a shim example did: install wrote the wrappers; exec recorded the
// model's gh write as an effect, which the develop's apply job then applies on #42.
func ghShimEffect(t *testing.T, line string, ex example, last func() string) {
	t.Helper()
	if ex.args[2] == "install" {
		for _, name := range []string{"gh", "bun", "autonomy", "env.sh"} {
			if fi, err := os.Stat(filepath.Join("shims", name)); err != nil || name != "env.sh" && fi.Mode()&0o111 == 0 {
				t.Errorf("%s: shims/%s: %v", line, name, err)
			}
		}
		return
	}
	applyEnv := jobEnvOf(t, filepath.Join(".github", "workflows"), "apply", "develop")
	for k := range applyEnv {
		t.Setenv(k, "")
	}
	for k, v := range map[string]string{"GITHUB_REPOSITORY": "o/r", "GH_TOKEN": "t", "AUTONOMY_ACTOR": "develop", "AUTONOMY_POLICY": applyEnv["AUTONOMY_POLICY"]} {
		t.Setenv(k, v)
	}
	// develop's session ends by delivering its result (autonomy.result.v1), as its apply checks.
	appendOutput(t, "outputs.jsonl", `{"tool":"submit_result","actor":"develop","session":"7","input":{"status":"done","summary":"Said it is working on #42."}}`)
	if code, out, errOut := run(t, "gh", "apply", "--outputs", "outputs.jsonl"); code != 0 || last() != "Working on it." {
		t.Errorf("%s, then develop's apply: exit %d, the last comment on #42 %q\n%s%s", line, code, last(), out, errOut)
	}
}

// appendOutput appends one safe-output line to the file at path.
func appendOutput(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}
