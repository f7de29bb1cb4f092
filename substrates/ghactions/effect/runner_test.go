//go:build unix

package effect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/internal/testfs"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghexpr"
)

// A stand-in for the GitHub runner: it reads a generated workflow and runs a job's steps as a
// runner would — every run: script with bash -eo pipefail and the job's and step's env, each
// ${{ }} evaluated against the values of the run — so the test runs exactly what the workflow
// declares. Pinned actions are played by their documented effect (checkout, upload and
// download an artifact); the two install steps are replaced (see runJob).

// ghExpr evaluates a GitHub Actions expression (without its ${{ }}) over values as GitHub does
// (ghexpr.Eval, through exprContext).
func ghExpr(src string, values map[string]string) (string, error) {
	ctx, err := exprContext(values)
	if err != nil {
		return "", err
	}
	return ghexpr.Eval("${{ "+src+" }}", ctx)
}

// exprContext is values as ghexpr reads them: a context path's value, an object filter's path
// (github.event.issue.labels.*.name) to the list its JSON array holds; an unknown path is null.
func exprContext(values map[string]string) (map[string]any, error) {
	ctx := make(map[string]any, len(values))
	for k, v := range values {
		ctx[k] = v
		if strings.Contains(k, ".*") {
			var list []any
			if err := json.Unmarshal([]byte(v), &list); err != nil {
				return nil, fmt.Errorf("%s: %v", k, err)
			}
			ctx[k] = list
		}
	}
	return ctx, nil
}

// evaluate replaces each ${{ }} of a value.
func evaluate(t *testing.T, v string, values map[string]string) string {
	t.Helper()
	ctx, err := exprContext(values)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ghexpr.Eval(v, ctx)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGHExpr(t *testing.T) {
	values := map[string]string{"inputs.PR": "7", "github.event_name": "workflow_dispatch", "github.ref": "refs/heads/main", "github.event.repository.default_branch": "main"}
	for src, want := range map[string]string{
		"inputs.PR":             "7",
		"inputs.NONE || 'none'": "none",
		"github.event_name == 'WORKFLOW_DISPATCH'": "true",
		"github.event_name != 'workflow_dispatch'": "false",
		"github.event_name == 'issues' && (inputs.PR) || github.event_name == 'workflow_dispatch' && (inputs.PR) || ''": "7",
		"github.ref == format('refs/heads/{0}', github.event.repository.default_branch)":                                "true",
		"vars.AUTONOMY_PAUSED != 'true' && !(1 == 2)":                                                                   "true",
		"'it''s'": "it's",
		"contains(fromJSON('[\"OWNER\",\"MEMBER\"]'), 'member')":                     "true",
		"contains(fromJSON('[\"OWNER\"]'), github.event.comment.author_association)": "false",
		"startsWith('/Agent develop', '/agent dev')":                                 "true",
		"startsWith(format('{0} ', '/agent developer'), '/agent develop ')":          "false",
		"startsWith('/agent develop\nmore', fromJSON('\"/agent develop\\n\"'))":      "true",
	} {
		got, err := ghExpr(src, values)
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", src, got, err, want)
		}
	}
}

// workflowJob is one job of a generated workflow, as the runner reads it.
type workflowJob struct {
	If      string            `yaml:"if"`
	Env     yaml.Node         `yaml:"env"`
	Outputs map[string]string `yaml:"outputs"`
	Steps   []struct {
		Name string            `yaml:"name"`
		ID   string            `yaml:"id"`
		If   string            `yaml:"if"`
		Uses string            `yaml:"uses"`
		With map[string]string `yaml:"with"`
		Env  yaml.Node         `yaml:"env"`
		Run  string            `yaml:"run"`
	} `yaml:"steps"`
}

func readJob(t *testing.T, path, id string) workflowJob {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]workflowJob `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	j, ok := wf.Jobs[id]
	if !ok {
		t.Fatalf("%s has no job %s", path, id)
	}
	return j
}

func pairs(n *yaml.Node) [][2]string {
	var out [][2]string
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]string{n.Content[i].Value, n.Content[i+1].Value})
	}
	return out
}

// runner is one repository's runs: the bare repository jobs check out, the artifacts of the
// run, and what every job's environment holds.
type runner struct {
	t         *testing.T
	origin    string
	artifacts map[string]string // "RUNID/name" → directory
	base      []string          // the runner's own env (PATH, HOME, GITHUB_*)
	autonomy  string            // the autonomy binary standing in for the install step
	// fake, when set, is told of every artifact a run of its own uploads, and a download finds
	// only those it still has (a deleted one is gone).
	fake *ghfake.Server
}

// job runs job id of the workflow at path with values, and returns its output. It fails the
// test when a step fails, unless wantFail; it reports false when the job's if: skips it. A step's
// if: is evaluated against its steps' outputs (GITHUB_OUTPUT); the job's result and outputs are
// left in values as needs.ID.result and needs.ID.outputs.NAME for the jobs that need it. The
// artifacts are the run's (github.run_id), or the run a download names with run-id.
func (r *runner) job(path, id string, values map[string]string, wantFail bool) (string, bool) {
	t := r.t
	t.Helper()
	j := readJob(t, path, id)
	temp := t.TempDir()
	ws := filepath.Join(temp, "workspace")
	values["runner.temp"] = temp
	for k := range values {
		if strings.HasPrefix(k, "steps.") {
			delete(values, k)
		}
	}
	if j.If != "" && evaluate(t, j.If, values) != "true" {
		values["needs."+id+".result"] = "skipped"
		return "", false
	}
	githubEnv := filepath.Join(temp, "github_env")
	githubOutput := filepath.Join(temp, "github_output")
	env := append(append([]string{}, r.base...), "RUNNER_TEMP="+temp, "GITHUB_WORKSPACE="+ws, "GITHUB_ENV="+githubEnv,
		"GITHUB_OUTPUT="+githubOutput, "GITHUB_STEP_SUMMARY="+filepath.Join(temp, "github_step_summary"))
	if ev := values["github.event_name"]; ev != "" {
		env = append(env, "GITHUB_EVENT_NAME="+ev)
	}
	if run := values["github.run_id"]; run != "" {
		env = append(env, "GITHUB_RUN_ID="+run)
	}
	if sha := values["github.sha"]; sha != "" {
		env = append(env, "GITHUB_SHA="+sha) // as GitHub's runner sets it: the commit checked out
	}
	for _, kv := range pairs(&j.Env) {
		env = append(env, kv[0]+"="+evaluate(t, kv[1], values))
	}
	var log strings.Builder
	defer func() {
		for k, v := range j.Outputs {
			values["needs."+id+".outputs."+k] = evaluate(t, v, values)
		}
	}()
	values["needs."+id+".result"] = "failure"
	// failed is the step that failed: after it only the steps that run always() run, as on
	// GitHub, and the job fails.
	failed := ""
	for _, st := range j.Steps {
		// A condition calling always() is evaluated after a failure too (always() is true);
		// any other condition, or none, only while no step has failed.
		always := strings.Contains(st.If, "always()")
		if failed != "" && !always {
			continue
		}
		if st.If != "" {
			if got, err := ghExpr(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(st.If), "${{"), "}}"), values); err != nil {
				t.Fatal(err)
			} else if got != "true" {
				continue
			}
		}
		with := map[string]string{}
		for k, v := range st.With {
			with[k] = evaluate(t, v, values)
		}
		switch {
		case strings.HasPrefix(st.Uses, "actions/checkout@"):
			gitRun(t, temp, "clone", "--quiet", r.origin, ws)
			gitRun(t, ws, "checkout", "--quiet", values["github.sha"])
			continue
		case strings.HasPrefix(st.Uses, "actions/upload-artifact@") && strings.Contains(strings.TrimSpace(with["path"]), "\n"):
			// Several files: the artifact holds those that exist, by their base names.
			dir := t.TempDir()
			for _, f := range strings.Fields(with["path"]) {
				if data, err := os.ReadFile(f); err == nil {
					if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			r.artifacts[values["github.run_id"]+"/"+with["name"]] = dir
			continue
		case strings.HasPrefix(st.Uses, "actions/upload-artifact@"):
			if _, err := os.Stat(with["path"]); err != nil && with["if-no-files-found"] == "ignore" {
				continue
			}
			r.artifacts[values["github.run_id"]+"/"+with["name"]] = copyDir(t, with["path"], t.TempDir())
			if run, err := strconv.ParseInt(values["github.run_id"], 10, 64); err == nil && r.fake != nil {
				if _, ok := r.fake.AddArtifact(run, with["name"]); !ok {
					t.Fatalf("%s: run %d uploads a second artifact %s", id, run, with["name"])
				}
			}
			continue
		case strings.HasPrefix(st.Uses, "actions/download-artifact@"):
			run := values["github.run_id"]
			if with["run-id"] != "" {
				run = with["run-id"]
			}
			src, ok := r.artifacts[run+"/"+with["name"]]
			if n, err := strconv.ParseInt(run, 10, 64); err == nil && r.fake != nil && ok {
				ok = r.fake.HasArtifact(n, with["name"])
			}
			if !ok {
				fmt.Fprintf(&log, "--- %s: %s\nno artifact %s in run %s\n", id, st.Name, with["name"], run)
				if wantFail {
					return log.String(), true
				}
				t.Fatalf("%s: no artifact %s in run %s", id, with["name"], run)
			}
			copyDir(t, src, with["path"])
			continue
		case st.Uses != "":
			t.Fatalf("%s: the runner does not play %s", id, st.Uses)
		case st.Name == "Install the agent":
			// The pinned CLI agentcli installed is first on PATH: what this step installs.
			continue
		case st.Name == "Install autonomy":
			// install_slow_test.go runs this step against a git server, a release and a module
			// proxy; here the autonomy built from this checkout stands in for the one that
			// compiled the workflow.
			if err := os.WriteFile(githubEnv, []byte("AUTONOMY_BIN="+r.autonomy+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		stepEnv := append([]string{}, env...)
		for _, kv := range pairs(&st.Env) {
			stepEnv = append(stepEnv, kv[0]+"="+evaluate(t, kv[1], values))
		}
		if data, err := os.ReadFile(githubEnv); err == nil {
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if line != "" {
					stepEnv = append(stepEnv, line)
				}
			}
		}
		script := filepath.Join(temp, "step.sh")
		if err := os.WriteFile(script, []byte(st.Run), 0o600); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(githubOutput)
		out, err := runBash(t, ws, stepEnv, script)
		fmt.Fprintf(&log, "--- %s: %s\n%s", id, st.Name, out)
		if st.ID != "" {
			if data, rerr := os.ReadFile(githubOutput); rerr == nil {
				for _, line := range strings.Split(string(data), "\n") {
					if k, v, ok := strings.Cut(line, "="); ok {
						values["steps."+st.ID+".outputs."+k] = v
					}
				}
			}
		}
		if st.ID != "" {
			values["steps."+st.ID+".outcome"] = map[bool]string{true: "success", false: "failure"}[err == nil]
		}
		if err != nil && failed == "" {
			failed = fmt.Sprintf("%s: step %q failed: %v", id, st.Name, err)
		}
	}
	switch {
	case failed != "" && wantFail:
		return log.String(), true
	case failed != "":
		t.Fatalf("%s\n%s", failed, log.String())
	case wantFail:
		t.Fatalf("%s succeeded, want a failure:\n%s", id, log.String())
	}
	values["needs."+id+".result"] = "success"
	return log.String(), true
}

// runBash runs a step as GitHub's bash shell does, in its own process group, for 3 minutes at most.
func runBash(t *testing.T, dir string, env []string, script string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if ctx.Err() != nil {
		t.Fatalf("a step timed out:\n%s", out.String())
	}
	return out.String(), err
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func copyDir(t *testing.T, src, dst string) string {
	t.Helper()
	testfs.CopyTree(t, src, dst)
	return dst
}
