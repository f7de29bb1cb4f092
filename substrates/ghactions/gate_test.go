package ghactions

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/internal/testbin"
	"github.com/autonomyhq/autonomy/substrates"
)

// testBinary is the autonomy binary of this tree, built once for the whole test run.
func testBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the autonomy binary")
	}
	return testbin.Path(t)
}

// writeCheckout writes a compile's output into dir, as the repository's checkout holds it.
func writeCheckout(t *testing.T, dir string, out substrates.Output) {
	t.Helper()
	for _, f := range out.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// resolveExpr is a compiled env value with its ${{ expression }} replaced from values; the test
// fails on an expression it does not know or one embedded in text.
func resolveExpr(t *testing.T, values map[string]string, v string) string {
	t.Helper()
	m := exprPattern.FindStringSubmatch(v)
	if m == nil {
		if strings.Contains(v, "${{") {
			t.Fatalf("an expression inside a value: %q", v)
		}
		return v
	}
	x, ok := values[m[1]]
	if !ok {
		t.Fatalf("the test does not know the expression %q", m[1])
	}
	return x
}

// stepResult is what one run step of a job did.
type stepResult struct {
	name           string
	code           int
	stdout, stderr string
}

// runJobSteps runs a parsed job's run steps in order as a GitHub runner does (bash -e -o
// pipefail, the job's env then the step's, in ws) and stops at the first that fails, as GitHub
// does for steps without an if. The install step is skipped: base sets AUTONOMY_BIN.
func runJobSteps(t *testing.T, job pbJob, ws string, base []string, values map[string]string) []stepResult {
	t.Helper()
	var res []stepResult
	for _, s := range job.Steps {
		if s.Uses != "" || s.Name == installStepName {
			continue
		}
		env := append([]string{}, base...)
		for k, v := range job.Env {
			env = append(env, k+"="+resolveExpr(t, values, v))
		}
		for k, v := range s.Env {
			env = append(env, k+"="+resolveExpr(t, values, v))
		}
		cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", s.Run)
		var stdout, stderr bytes.Buffer
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = ws, env, &stdout, &stderr
		err := cmd.Run()
		r := stepResult{name: s.Name, stdout: stdout.String(), stderr: stderr.String()}
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			r.code = ee.ExitCode()
		case err != nil:
			t.Fatalf("step %q: %v", s.Name, err)
		}
		res = append(res, r)
		if r.code != 0 {
			break
		}
	}
	return res
}

// TestApprovalGateFailsClosed runs the compiled approval job of profiles/release-gate, with the
// env read from the parsed workflow and the autonomy binary of this tree, against ghfake in each
// state a repository can be in when the job starts. Only an environment with required reviewers
// and an approval of it in this run's review history lets the job's playbook steps run; every
// other state fails the gate step with the reason and the fix, and nothing after it runs.
func TestApprovalGateFailsClosed(t *testing.T) {
	bin := testBinary(t)
	const envName = "autonomy-releaser-approve"
	wf, _ := compiledPlaybook(t, "../../profiles/release-gate", "releaser")
	job := wf.Jobs["approval-1"]
	if job.Environment != envName {
		t.Fatalf("approval-1 is gated by %q", job.Environment)
	}
	// The gate comes before every playbook step, and only the approval job reads Actions.
	var order []string
	for _, s := range job.Steps {
		if s.Uses == "" && s.Name != installStepName {
			order = append(order, s.Name)
		}
	}
	if len(order) < 2 || order[0] != gateStepName || job.Steps[len(job.Steps)-len(order)].Env[gateEnv] != envName {
		t.Fatalf("approval-1 runs %v, want the gate %q on %s first", order, gateStepName, envName)
	}
	if len(job.Permissions) != 2 || job.Permissions["contents"] != "read" || job.Permissions["actions"] != "read" {
		t.Errorf("approval-1 permissions %v, want contents: read and actions: read only", job.Permissions)
	}
	if p := wf.Jobs["steps"].Permissions; len(p) != 1 || p["contents"] != "read" {
		t.Errorf("the ungated job's permissions %v, want contents: read only", p)
	}

	_, out := compileDir(t, "../../profiles/release-gate")
	wfs, err := ghfake.WorkflowsFromOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	ws := filepath.Join(root, "ws") // the checkout: the installation compile wrote
	writeCheckout(t, ws, out)
	reviewers := ghfake.Environment{Name: envName, Reviewers: []int64{ghfake.UserID("alice")}}
	refusal := "autonomy: environment " + envName
	fix := "run `autonomy provision PROFILE --repo o/r` (it makes the maintainers the environment's required reviewers), then re-run this workflow and approve the deployment"
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, fake *ghfake.Server, run int64)
		want  []string // in the gate's stderr; none: the gate passes
	}{
		{"environment missing", func(*testing.T, *ghfake.Server, int64) {},
			[]string{refusal + " does not exist, so nobody approved this job: " + fix}},
		{"created by GitHub unprotected", func(_ *testing.T, fake *ghfake.Server, _ int64) {
			fake.SetEnvironment(ghfake.Environment{Name: envName, CanAdminsBypass: true})
		}, []string{refusal + " has no required reviewers, so nobody approved this job (GitHub creates a job's missing environment unprotected): " + fix}},
		{"a wait timer but no reviewers", func(_ *testing.T, fake *ghfake.Server, _ int64) {
			fake.SetEnvironment(ghfake.Environment{Name: envName, WaitTimer: 5})
		}, []string{refusal + " has no required reviewers"}},
		{"reviewers, no review of this run", func(t *testing.T, fake *ghfake.Server, _ int64) {
			fake.SetEnvironment(reviewers)
			other, err := fake.AddRun("releaser.yml", "workflow_dispatch")
			if err != nil {
				t.Fatal(err)
			}
			if err := fake.Review(other, "alice", "approved", "another run", envName); err != nil {
				t.Fatal(err)
			}
		}, []string{refusal + " has required reviewers, but run ", " holds no approval of it (it has no review of this environment): the job was not held for review", "re-run this workflow and approve the deployment"}},
		{"an approval of another environment", func(t *testing.T, fake *ghfake.Server, run int64) {
			fake.SetEnvironment(reviewers)
			fake.SetEnvironment(ghfake.Environment{Name: "autonomy-releaser-other", Reviewers: []int64{ghfake.UserID("alice")}})
			if err := fake.Review(run, "alice", "approved", "", "autonomy-releaser-other"); err != nil {
				t.Fatal(err)
			}
		}, []string{refusal + " has required reviewers, but run ", "(it has no review of this environment)"}},
		{"only a comment and a rejection", func(t *testing.T, fake *ghfake.Server, run int64) {
			fake.SetEnvironment(reviewers)
			if err := fake.Review(run, "alice", "pending", "looking", envName); err != nil {
				t.Fatal(err)
			}
			if err := fake.Review(run, "alice", "rejected", "no", envName); err != nil {
				t.Fatal(err)
			}
		}, []string{"(its reviews of this environment are pending, rejected)"}},
		{"approved", func(t *testing.T, fake *ghfake.Server, run int64) {
			fake.SetEnvironment(reviewers)
			if err := fake.Review(run, "alice", "approved", "ship it", envName, "autonomy-releaser-other-env-not-needed"); err == nil {
				t.Fatal("a review of an environment that does not exist was recorded")
			}
			if err := fake.Review(run, "alice", "approved", "ship it", envName); err != nil {
				t.Fatal(err)
			}
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake, err := ghfake.New(ghfake.Options{Token: "ghs_gate", Workflows: wfs, Users: []string{"alice"}})
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			run, err := fake.AddRun("releaser.yml", "workflow_dispatch")
			if err != nil {
				t.Fatal(err)
			}
			c.setup(t, fake, run)
			temp := t.TempDir()
			base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "AUTONOMY_BIN=" + bin, "RUNNER_TEMP=" + temp,
				"GITHUB_WORKSPACE=" + ws, "GITHUB_OUTPUT=" + filepath.Join(temp, "output"), "GITHUB_STEP_SUMMARY=" + filepath.Join(temp, "summary"),
				"GITHUB_REPOSITORY=o/r", "GITHUB_API_URL=" + strings.TrimSuffix(fake.URL, "/"), "GITHUB_SERVER_URL=https://github.com",
				"GITHUB_RUN_ID=" + strconv.FormatInt(run, 10)}
			values := map[string]string{"github.token": "ghs_gate", "inputs.VERSION": "v1.2.3", "needs.steps.outputs.data": ""}
			res := runJobSteps(t, job, ws, base, values)
			gate := res[0]
			if gate.name != gateStepName {
				t.Fatalf("the first step run is %q", gate.name)
			}
			if c.want == nil {
				if gate.code != 0 || !strings.Contains(gate.stdout, "approval gate: environment "+envName+" of run "+strconv.FormatInt(run, 10)+" approved by alice") {
					t.Fatalf("the gate refused an approved run: exit %d\n%s%s", gate.code, gate.stdout, gate.stderr)
				}
				if len(res) < 2 || !strings.Contains(res[1].name, "approve") || res[1].code != 0 {
					t.Errorf("the approval step did not run after the gate: %+v", res)
				}
				return
			}
			if gate.code != 1 {
				t.Fatalf("gate: exit %d, want 1 (refused)\n%s%s", gate.code, gate.stdout, gate.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(gate.stderr, w) {
					t.Errorf("gate stderr\n%s\nlacks %q", gate.stderr, w)
				}
			}
			if !strings.HasPrefix(gate.stdout, "::error title=approval gate::environment "+envName+" ") {
				t.Errorf("the refusal is not the run's annotation: %q", gate.stdout)
			}
			if len(res) != 1 {
				t.Errorf("steps ran after a refused gate: %+v", res[1:])
			}
			if _, err := os.Stat(filepath.Join(temp, "autonomy-playbook.json")); err == nil {
				t.Error("a playbook step wrote its data after a refused gate")
			}
		})
	}
}
