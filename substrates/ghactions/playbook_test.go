package ghactions

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

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// pbWorkflow is the part of a compiled workflow-playbook workflow the tests read.
type pbWorkflow struct {
	Permissions map[string]string `yaml:"permissions"`
	Jobs        map[string]pbJob  `yaml:"jobs"`
}

type pbJob struct {
	Needs       string            `yaml:"needs"`
	Environment string            `yaml:"environment"`
	Permissions map[string]string `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Outputs     map[string]string `yaml:"outputs"`
	Steps       []pbStep          `yaml:"steps"`
}

type pbStep struct {
	Name string            `yaml:"name"`
	ID   string            `yaml:"id"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
}

// compiledPlaybook compiles the profile in dir and parses the workflow of actor.
func compiledPlaybook(t *testing.T, dir, actor string) (pbWorkflow, []byte) {
	t.Helper()
	_, out := compileDir(t, dir)
	data := outputFile(out, WorkflowPath(actor))
	if data == nil {
		t.Fatalf("no %s in the output", WorkflowPath(actor))
	}
	var wf pbWorkflow
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("%s: %v", WorkflowPath(actor), err)
	}
	return wf, data
}

// jobOrder is the jobs in the order their needs chain them, the first having none.
func jobOrder(t *testing.T, wf pbWorkflow) []string {
	t.Helper()
	var order []string
	prev := ""
	for len(order) < len(wf.Jobs) {
		found := ""
		for id, j := range wf.Jobs {
			if j.Needs == prev {
				if found != "" {
					t.Fatalf("jobs %s and %s both need %q", found, id, prev)
				}
				found = id
			}
		}
		if found == "" {
			t.Fatalf("no job needs %q; jobs: %v", prev, wf.Jobs)
		}
		order = append(order, found)
		prev = found
	}
	return order
}

// TestPlaybookEnvironmentGate: every approval step of the release-gate profile is a job gated by
// its environment, after the job before it, with only the capabilities' permissions (and, in
// the approval job, actions: read for its gate: TestApprovalGateFailsClosed).
func TestPlaybookEnvironmentGate(t *testing.T) {
	wf, data := compiledPlaybook(t, "../../profiles/release-gate", "releaser")
	if len(wf.Permissions) != 0 {
		t.Errorf("workflow permissions %v, want {}", wf.Permissions)
	}
	order := jobOrder(t, wf)
	if strings.Join(order, " ") != "steps approval-1" {
		t.Fatalf("jobs %v, want steps then approval-1", order)
	}
	if env := wf.Jobs["steps"].Environment; env != "" {
		t.Errorf("the job before the approval is gated by %q", env)
	}
	gate := wf.Jobs["approval-1"]
	if gate.Environment != "autonomy-releaser-approve" || gate.Environment != EnvironmentName("releaser", "approve") {
		t.Errorf("approval-1 is gated by %q, want autonomy-releaser-approve", gate.Environment)
	}
	if gate.Env[playbookDataEnv] != "${{ needs.steps.outputs.data }}" {
		t.Errorf("approval-1 reads the data %q", gate.Env[playbookDataEnv])
	}
	var first []string
	for _, s := range gate.Steps {
		if spec := s.Env[playbookStepEnv]; spec != "" {
			var v struct{ ID string }
			if err := json.Unmarshal([]byte(spec), &v); err != nil {
				t.Fatal(err)
			}
			first = append(first, v.ID)
		}
	}
	if strings.Join(first, " ") != "approve tag report" {
		t.Errorf("the gated job runs %v, want approve tag report", first)
	}
	for id, j := range wf.Jobs {
		want := map[string]string{"contents": "read"}
		if j.Environment != "" {
			want["actions"] = "read"
		}
		if !maps.Equal(j.Permissions, want) {
			t.Errorf("job %s has permissions %v, want %v", id, j.Permissions, want)
		}
		for _, s := range j.Steps {
			if strings.Contains(s.Run, "${{") {
				t.Errorf("job %s step %q interpolates into its script: %q", id, s.Name, s.Run)
			}
		}
	}
	// The manifest lists the environment for autonomy provision.
	_, out := compileDir(t, "../../profiles/release-gate")
	var m struct {
		Actors []struct {
			Name         string
			Environments []string
		}
	}
	if err := json.Unmarshal(outputFile(out, ".autonomy/gh-actions/manifest.json"), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Actors) != 1 || strings.Join(m.Actors[0].Environments, ",") != "autonomy-releaser-approve" {
		t.Errorf("manifest actors %+v, want releaser with autonomy-releaser-approve", m.Actors)
	}
	_ = data
}

// outputFile is the data of the output's file at path, or nil.
func outputFile(out substrates.Output, path string) []byte {
	for _, f := range out.Files {
		if f.Path == path {
			return f.Data
		}
	}
	return nil
}

var exprPattern = regexp.MustCompile(`^\$\{\{ (.+) \}\}$`)

// TestPlaybookStepsRunAsArgv runs the compiled steps of testdata/playbook-hostile, job after job
// as GitHub would (a fresh RUNNER_TEMP per job, the job output carried to the next job's env),
// with the env read from the parsed YAML and the autonomy binary built from this tree: shell
// syntax in the commands, the args and the step data reaches the commands as words, and no
// file appears. The approval job's gate passes on ghfake, where the environment has a required
// reviewer who approved the run.
func TestPlaybookStepsRunAsArgv(t *testing.T) {
	bin := testBinary(t)
	wf, _ := compiledPlaybook(t, "testdata/playbook-hostile", "hostile")
	_, compiled := compileDir(t, "testdata/playbook-hostile")
	root := t.TempDir()
	ws := filepath.Join(root, "ws") // the checkout, holding the installation
	writeCheckout(t, ws, compiled)
	wfs, err := ghfake.WorkflowsFromOutput(compiled)
	if err != nil {
		t.Fatal(err)
	}
	fake, err := ghfake.New(ghfake.Options{Token: "t0ken", Workflows: wfs})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	runID, err := fake.AddRun("hostile.yml", "workflow_dispatch")
	if err != nil {
		t.Fatal(err)
	}
	gated := EnvironmentName("hostile", "approve")
	fake.SetEnvironment(ghfake.Environment{Name: gated, Reviewers: []int64{ghfake.UserID("alice")}})
	if err := fake.Review(runID, "alice", "approved", "", gated); err != nil {
		t.Fatal(err)
	}
	name := "; touch pwned4 $(touch pwned5) `touch pwned6`"
	values := map[string]string{"inputs.NAME": name, "github.token": "t0ken"}
	resolve := func(v string) string { return resolveExpr(t, values, v) }
	records := map[string]map[string]any{}
	var gates []string
	for _, id := range jobOrder(t, wf) {
		job := wf.Jobs[id]
		temp := filepath.Join(root, "temp-"+id) // every job runs on a fresh runner
		if err := os.Mkdir(temp, 0o755); err != nil {
			t.Fatal(err)
		}
		outputs := map[string]map[string]string{}
		for i, s := range job.Steps {
			if s.Uses != "" || s.Name == installStepName {
				continue
			}
			outFile := filepath.Join(temp, "output-"+s.ID)
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "AUTONOMY_BIN=" + bin, "RUNNER_TEMP=" + temp,
				"GITHUB_WORKSPACE=" + ws, "GITHUB_OUTPUT=" + outFile, "GITHUB_STEP_SUMMARY=" + filepath.Join(temp, "summary"),
				"GITHUB_REPOSITORY=o/r", "GITHUB_API_URL=" + fake.URL, "GITHUB_RUN_ID=" + strconv.FormatInt(runID, 10)}
			for k, v := range job.Env {
				env = append(env, k+"="+resolve(v))
			}
			for k, v := range s.Env {
				env = append(env, k+"="+resolve(v))
			}
			cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", s.Run)
			cmd.Dir, cmd.Env = ws, env
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("job %s step %d (%s): %v\n%s", id, i, s.Name, err, out)
			}
			if s.Name == gateStepName {
				gates = append(gates, strings.TrimSpace(string(out)))
				continue // it prints the approval, not a step record
			}
			var rec map[string]any
			if err := json.Unmarshal(out, &rec); err != nil {
				t.Fatalf("job %s step %s printed %q: %v", id, s.Name, out, err)
			}
			records[rec["id"].(string)] = rec
			raw, _ := os.ReadFile(outFile)
			outputs[s.ID] = map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					outputs[s.ID][k] = v
				}
			}
		}
		for k, v := range job.Outputs {
			m := regexp.MustCompile(`^\$\{\{ steps\.([a-z0-9-]+)\.outputs\.([a-z]+) \}\}$`).FindStringSubmatch(v)
			if m == nil {
				t.Fatalf("job %s output %s = %q", id, k, v)
			}
			values["needs."+id+".outputs."+k] = outputs[m[1]][m[2]]
		}
	}
	want := map[string]string{
		"first":   "; touch pwned|$(touch pwned2)|`touch pwned3`|&&|touch|pwned7|",
		"greet":   name + "|",
		"approve": "; touch pwned|$(touch pwned2)|`touch pwned3`|&&|touch|pwned7|", // step data across the gate
		"after":   name + "||",
	}
	for id, w := range want {
		if got, _ := records[id]["stdout"].(string); got != w || records[id]["status"] != "ok" {
			t.Errorf("step %s: %v, want stdout %q", id, records[id], w)
		}
	}
	if want := "approval gate: environment " + gated + " of run " + strconv.FormatInt(runID, 10) + " approved by alice"; len(gates) != 1 || gates[0] != want {
		t.Errorf("the gates printed %q, want %q once", gates, want)
	}
	if records["approve"]["approved"] != true {
		t.Errorf("the approval step reads not approved: %v", records["approve"])
	}
	for _, dir := range []string{ws, root, "."} {
		matches, _ := filepath.Glob(filepath.Join(dir, "pwned*"))
		if len(matches) > 0 {
			t.Errorf("a shell ran: %v", matches)
		}
	}
}

// TestPlaybookUnsupportedSteps: a step no gh-actions job can run, and a capability that needs a
// model, are positioned compile errors with their fix; nothing is written.
func TestPlaybookUnsupportedSteps(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, "testdata/playbook-hostile", dir)
	pb := filepath.Join(dir, "playbooks", "hostile.yml")
	data, err := os.ReadFile(pb)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), "command: cli printf \"%s|\" $args.NAME", "command: mcp github search_issues q=text", 1)
	if bad == string(data) {
		t.Fatal("the test playbook changed: no greet step to replace")
	}
	if err := os.WriteFile(pb, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v\n%s", err, diags)
	}
	out, err := Substrate{}.Compile(resolve(p))
	if err == nil || len(out.Files) != 0 {
		t.Fatalf("an mcp step compiled: %v, %d files", err, len(out.Files))
	}
	msg := err.Error()
	if !strings.Contains(msg, "hostile.yml:10:14: step \"greet\": mcp steps cannot run on gh-actions") ||
		!strings.Contains(msg, "use a cli or http step") {
		t.Errorf("the error is %q", msg)
	}
}
