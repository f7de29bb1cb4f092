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
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/internal/testfs"
)

// A stand-in for the GitHub runner: it reads a generated workflow and runs a job's steps as a
// runner would — every run: script with bash -eo pipefail and the job's and step's env, each
// ${{ }} evaluated against the values of the run — so the test runs exactly what the workflow
// declares. Pinned actions are played by their documented effect (checkout, upload and
// download an artifact); the two install steps are replaced (see runJob).

// ghExpr evaluates a GitHub Actions expression over values: property paths, string and number
// literals, == != (strings compared ignoring case, as GitHub does) ! && || (returning an
// operand, as GitHub does), parentheses, format(), contains(), startsWith() and fromJSON(). An unknown path is null.
func ghExpr(src string, values map[string]string) (string, error) {
	p := &exprParser{src: src, values: values}
	v := p.or()
	p.space()
	if p.err == nil && p.i < len(p.src) {
		p.err = fmt.Errorf("unexpected %q", p.src[p.i:])
	}
	if p.err != nil {
		return "", fmt.Errorf("expression %q: %v", src, p.err)
	}
	return str(v), nil
}

type exprParser struct {
	src    string
	i      int
	values map[string]string
	err    error
}

func (p *exprParser) space() {
	for p.i < len(p.src) && p.src[p.i] == ' ' {
		p.i++
	}
}

func (p *exprParser) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.src[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case float64:
		return v != 0
	}
	return true
}

func str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (p *exprParser) or() any {
	v := p.and()
	for p.eat("||") {
		r := p.and()
		if !truthy(v) {
			v = r
		}
	}
	return v
}

func (p *exprParser) and() any {
	v := p.eq()
	for p.eat("&&") {
		r := p.eq()
		if truthy(v) {
			v = r
		}
	}
	return v
}

func (p *exprParser) eq() any {
	v := p.unary()
	for {
		var neg bool
		switch {
		case p.eat("=="):
		case p.eat("!="):
			neg = true
		default:
			return v
		}
		r := p.unary()
		same := strings.EqualFold(str(v), str(r))
		v = same != neg
	}
}

func (p *exprParser) unary() any {
	if p.eat("!") {
		return !truthy(p.unary())
	}
	return p.primary()
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.*-]*`)

func (p *exprParser) primary() any {
	p.space()
	switch {
	case p.err != nil:
		return nil
	case p.eat("("):
		v := p.or()
		if !p.eat(")") {
			p.err = fmt.Errorf("missing ) at %d", p.i)
		}
		return v
	case p.i < len(p.src) && p.src[p.i] == '\'':
		var b strings.Builder
		for p.i++; p.i < len(p.src); p.i++ {
			if p.src[p.i] == '\'' {
				if p.i+1 < len(p.src) && p.src[p.i+1] == '\'' {
					b.WriteByte('\'')
					p.i++
					continue
				}
				p.i++
				return b.String()
			}
			b.WriteByte(p.src[p.i])
		}
		p.err = fmt.Errorf("unterminated string")
		return nil
	case p.i < len(p.src) && unicode.IsDigit(rune(p.src[p.i])):
		j := p.i
		for p.i < len(p.src) && (unicode.IsDigit(rune(p.src[p.i])) || p.src[p.i] == '.') {
			p.i++
		}
		f, _ := strconv.ParseFloat(p.src[j:p.i], 64)
		return f
	}
	id := identRe.FindString(p.src[p.i:])
	if id == "" {
		p.err = fmt.Errorf("unexpected %q", p.src[p.i:])
		return nil
	}
	p.i += len(id)
	switch id {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	case "cancelled":
		// No run of the stand-in is ever cancelled.
		if !p.eat("(") || !p.eat(")") {
			p.err = fmt.Errorf("cancelled takes no arguments")
		}
		return false
	case "always":
		// A step with if: always() runs whatever the steps before it did; the stand-in stops
		// at a failed step, so it never reaches one after a failure.
		if !p.eat("(") || !p.eat(")") {
			p.err = fmt.Errorf("always takes no arguments")
		}
		return true
	case "format", "contains", "fromJSON", "startsWith":
		if !p.eat("(") {
			p.err = fmt.Errorf("%s without (", id)
			return nil
		}
		args := []any{p.or()}
		for p.eat(",") {
			args = append(args, p.or())
		}
		if !p.eat(")") {
			p.err = fmt.Errorf("%s without )", id)
			return nil
		}
		switch id {
		case "startsWith":
			// GitHub compares ignoring case.
			if len(args) != 2 {
				p.err = fmt.Errorf("startsWith takes 2 arguments")
				return nil
			}
			return strings.HasPrefix(strings.ToLower(str(args[0])), strings.ToLower(str(args[1])))
		case "fromJSON":
			var v any
			if err := json.Unmarshal([]byte(str(args[0])), &v); err != nil {
				p.err = err
			}
			return v
		case "contains":
			if len(args) != 2 {
				p.err = fmt.Errorf("contains takes 2 arguments")
				return nil
			}
			if list, ok := args[0].([]any); ok {
				for _, x := range list {
					if strings.EqualFold(str(x), str(args[1])) {
						return true
					}
				}
				return false
			}
			return strings.Contains(strings.ToLower(str(args[0])), strings.ToLower(str(args[1])))
		}
		f := str(args[0])
		for i, a := range args[1:] {
			f = strings.ReplaceAll(f, "{"+strconv.Itoa(i)+"}", str(a))
		}
		return f
	}
	if v, ok := p.values[id]; ok && strings.Contains(id, ".*") {
		// An object filter (github.event.issue.labels.*.name): its value is a JSON array.
		var list []any
		if err := json.Unmarshal([]byte(v), &list); err != nil {
			p.err = fmt.Errorf("%s: %v", id, err)
		}
		return list
	} else if ok {
		return v
	}
	return nil
}

var exprRe = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// evaluate replaces each ${{ }} of a value.
func evaluate(t *testing.T, v string, values map[string]string) string {
	t.Helper()
	return exprRe.ReplaceAllStringFunc(v, func(m string) string {
		out, err := ghExpr(exprRe.FindStringSubmatch(m)[1], values)
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
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
