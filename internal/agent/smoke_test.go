//go:build unix

package agent_test

// The smoke tests run every preset's real, pinned CLI against a scripted model endpoint
// (internal/modelfake), on both substrates, through the autonomy binary as a user runs it.
// They run with AUTONOMY_AGENT_SMOKE=1 (make agent-smoke); then a missing CLI fails them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/agentcli"
	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/testbin"
)

// smoke returns the pinned program of preset, or skips the test when the smoke tests are off.
func smoke(t *testing.T, preset string) string {
	t.Helper()
	if os.Getenv(agentcli.SmokeEnv) != "1" {
		t.Skipf("the agent smoke tests run with %s=1 (make agent-smoke)", agentcli.SmokeEnv)
	}
	p, ok := agent.Lookup(preset)
	pin, ok2 := agentcli.Lookup(preset)
	if !ok || !ok2 || pin.Version != p.Version || pin.Package != p.Package || pin.Program != p.Bin {
		t.Fatalf("preset %s (%s) and the pin agentcli installs (%s) disagree", preset, p.Spec(), pin.Spec())
	}
	for _, h := range p.Helpers {
		if _, err := exec.LookPath(h.Program); err != nil && !h.Bundled {
			t.Fatalf("%s's sandbox needs %s, which is not on PATH: install %s (apt-get install %s; .ci/run does)", preset, h.Program, h.Package, h.Package)
		}
	}
	return agentclitest.Require(t, preset)
}

// autonomyBinary is cmd/autonomy, built once for the whole test run.
func autonomyBinary(t *testing.T) string { return testbin.Path(t) }

// run runs a command to its end (2 minutes at most), in its own process group.
func run(t *testing.T, dir string, env []string, stdin string, argv ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(stdin)
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
		t.Fatalf("%s timed out:\n%s", strings.Join(argv, " "), out.String())
	}
	return out.String(), err
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo is a git repository with one commit and an identity for the agent's commits.
func newRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	mustGit(t, repo, "init", "-q", "-b", "main")
	mustGit(t, repo, "config", "user.email", "agent@example.com")
	mustGit(t, repo, "config", "user.name", "agent")
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("# app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustGit(t, repo, "add", "README.md")
	mustGit(t, repo, "commit", "-q", "-m", "init")
	return repo
}

// sdlcProfile copies profiles/sdlc with policy.box.<target>.agent set to preset.
func sdlcProfile(t *testing.T, target, preset string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "sdlc")
	if out, err := exec.Command("cp", "-r", "../../profiles/sdlc", dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	path := filepath.Join(dst, "ir.yml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var old string
	switch target {
	case "local":
		old = "local: { timezone: UTC }"
	default:
		old = "gh-actions: { model: gpt-5-codex, "
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("profiles/sdlc/ir.yml no longer holds %q: update the smoke test", old)
	}
	repl := strings.Replace(old, "{ ", "{ agent: "+preset+", ", 1)
	if target == "local" && preset == "codex" {
		// codex offers its tools for a model it knows (the fake's catalog is empty).
		repl = strings.Replace(repl, "{ ", "{ model: gpt-5-codex, ", 1)
	}
	if target != "local" && preset != "codex" {
		repl = "gh-actions: { agent: " + preset + ", " // a codex model name means nothing to claude
	}
	data = bytes.Replace(data, []byte(old), []byte(repl), 1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// cliEnv is a clean environment for a CLI run: PATH with the pinned program first, a home of
// its own under the temporary directory, which TMPDIR names, the credential and the scripted
// endpoint as the preset reads them.
func cliEnv(t *testing.T, program, preset, baseURL string) []string {
	t.Helper()
	p, _ := agent.Lookup(preset)
	home := t.TempDir() // under the temporary directory, as a user's may be
	env := []string{
		"PATH=" + filepath.Dir(program) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home, "CODEX_HOME=" + filepath.Join(home, ".codex"), "TMPDIR=" + os.TempDir(),
		p.CredentialEnv + "=sk-smoke-not-a-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
	}
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	if baseURL != "" {
		env = append(env, p.BaseURLEnv+"="+baseURL)
	}
	return env
}

// baseURL is what the preset's BaseURLEnv holds to reach the fake.
func baseURL(fake *modelfake.Server, preset string) string {
	if preset == "claude" {
		return fake.AnthropicBaseURL()
	}
	return fake.OpenAIBaseURL()
}

type sessionView struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Reason   string `json:"reason"`
	Verified string `json:"verified"`
	Branch   string `json:"branch"`
}

// waitEnded polls runner get until the session ended.
func waitEnded(t *testing.T, bin, dir, id string, env []string) sessionView {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		out, err := run(t, dir, env, "", bin, "runner", "--dir", dir, "get", id, "--format", "json")
		if err != nil {
			t.Fatalf("runner get %s: %v\n%s", id, err, out)
		}
		var v struct{ Session sessionView }
		if err := json.Unmarshal([]byte(out), &v.Session); err != nil {
			t.Fatalf("runner get: %v\n%s", err, out)
		}
		switch v.Session.Status {
		case "done", "failed", "cancelled":
			return v.Session
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s still %s after 3 minutes", id, v.Session.Status)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func sessionLog(t *testing.T, dir, id string) string {
	data, _ := os.ReadFile(filepath.Join(dir, ".autonomy", "state", "logs", id+".log"))
	return string(data)
}

const commitMsg = "develop: add the feature"

// developScript makes the CLI commit in its workspace, then finish with its result
// (autonomy.result.v1) as its final message: a session is done only with a result.
func developScript() []modelfake.Turn {
	return []modelfake.Turn{
		{Shell: "echo feature > feature.txt && git add feature.txt && git commit -q -m '" + commitMsg + "' && git log -1 --format=%s"},
		{Text: `{"status": "done", "summary": "Committed the feature.", "done": ["committed feature.txt"]}`},
	}
}

// verdictFor is the reviewer's autonomy.review.v1 verdict, bound to the commit it reviewed.
func verdictFor(headSha string) string {
	return `{"verdict":"approve","summary":"the feature is small and tested","findings":[],"headSha":"` + headSha + `"}`
}

// TestSmokeLocal runs each preset's CLI, installed under the temporary directory with its home
// (CODEX_HOME) there too, in its sandbox through the local runner: the develop actor commits,
// the reviewer returns a verdict.
func TestSmokeLocal(t *testing.T) {
	for _, preset := range agent.Names() {
		t.Run(preset, func(t *testing.T) {
			program := inTemp(t, preset, smoke(t, preset))
			bin := autonomyBinary(t)
			repo := newRepo(t)
			prof := sdlcProfile(t, "local", preset)
			if out, err := run(t, repo, os.Environ(), "", bin, "compile", prof, "--target", "local", "--out", repo); err != nil {
				t.Fatalf("compile: %v\n%s", err, out)
			}
			// The install stays uncommitted: the isolated worktree must still see it.

			fake := modelfake.Start(developScript()...)
			defer fake.Close()
			env := cliEnv(t, program, preset, baseURL(fake, preset))
			out, err := run(t, repo, env, "", bin, "runner", "--dir", repo, "launch", "develop", "--ref", "42")
			if err != nil {
				t.Fatalf("launch develop: %v\n%s", err, out)
			}
			id := strings.TrimSpace(out)
			s := waitEnded(t, bin, repo, id, env)
			if s.Status != "done" || fake.Err() != nil {
				t.Fatalf("develop ended %s (%s); model: %v\nlog:\n%s", s.Status, s.Reason, fake.Err(), sessionLog(t, repo, id))
			}
			scripted := fake.Scripted()
			if len(scripted) < 2 || !strings.Contains(scripted[0].Prompt, "develop — implement one ready task") {
				for _, r := range fake.Requests() {
					t.Logf("%s %s model=%s tools=%v", r.Method, r.Path, r.Model, r.Tools)
				}
				t.Fatalf("the skill did not reach the model (%d scripted requests of %d)", len(scripted), len(fake.Requests()))
			}
			branch := "autonomy/develop/" + id
			for i, r := range scripted {
				t.Logf("develop request %d: tool outputs %q", i, r.ToolOutputs)
			}
			t.Logf("develop log:\n%s", tail(sessionLog(t, repo, id), 3000))
			if got := mustGit(t, repo, "log", "-1", "--format=%s", branch); got != commitMsg {
				t.Fatalf("the tip of %s is %q, want the agent's commit %q\nlog:\n%s", branch, got, commitMsg, sessionLog(t, repo, id))
			}

			head := mustGit(t, repo, "rev-parse", branch)
			verdict := verdictFor(head)
			fake2 := modelfake.Start(modelfake.Turn{Shell: "git log -1 --format=%s"}, modelfake.Turn{JSON: json.RawMessage(verdict)})
			defer fake2.Close()
			env = cliEnv(t, program, preset, baseURL(fake2, preset))
			out, err = run(t, repo, env, "", bin, "runner", "--dir", repo, "launch", "reviewer", "--param", "PR="+branch, "--branch", branch)
			if err != nil {
				t.Fatalf("launch reviewer: %v\n%s", err, out)
			}
			rid := strings.TrimSpace(out)
			s = waitEnded(t, bin, repo, rid, env)
			if s.Status != "done" || fake2.Err() != nil {
				t.Fatalf("reviewer ended %s (%s); model: %v\nlog:\n%s", s.Status, s.Reason, fake2.Err(), sessionLog(t, repo, rid))
			}
			if !strings.Contains(s.Verified, "autonomy.review.v1") {
				t.Errorf("the verdict was not validated: verified = %q", s.Verified)
			}
			got, err := os.ReadFile(filepath.Join(repo, ".autonomy", "state", "results", rid+".json"))
			if err != nil || !jsonEqual(got, verdict) {
				t.Errorf("the stored result is %s (%v), want %s", got, err, verdict)
			}
			if out := fake2.Scripted()[1].ToolOutputs; len(out) == 0 || !strings.Contains(out[len(out)-1], commitMsg) {
				t.Errorf("the reviewer did not run on %s: tool output %q", branch, out)
			}
		})
	}
}

func jsonEqual(a []byte, b string) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// step is the agent step of a generated workflow: its env (the job's, then the step's) and
// its script.
type step struct {
	env    [][2]string
	script string
}

// agentStep reads the run step of the agent job out of a generated workflow.
func agentStep(t *testing.T, path, name string) step { return jobStep(t, path, "Run "+name) }

// withProxy runs the agent job's "Start the model proxy" step (the job's env, the step's env
// evaluated with values, AUTONOMY_BIN as "Install autonomy" leaves it) and returns env with what
// that step appended to $GITHUB_ENV: the proxy's URL and the placeholder key the agent step
// reads. The proxy is stopped when the test ends, as "Report the model usage" stops it.
func withProxy(t *testing.T, path, bin, dir string, env []string, values map[string]string) []string {
	t.Helper()
	st := jobStep(t, path, "Start the model proxy")
	ghEnv := filepath.Join(t.TempDir(), "github_env")
	env = append(env, "AUTONOMY_BIN="+bin, "GITHUB_ENV="+ghEnv)
	stepEnv := append([]string(nil), env...)
	for _, kv := range st.env {
		stepEnv = append(stepEnv, kv[0]+"="+evaluate(kv[1], values))
	}
	script := filepath.Join(t.TempDir(), "proxy.sh")
	if err := os.WriteFile(script, []byte(st.script), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, dir, stepEnv, "", "bash", "--noprofile", "--norc", "-eo", "pipefail", script); err != nil {
		t.Fatalf("the model proxy step failed: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = run(t, dir, env, "", bin, "gh", "model-usage") })
	data, err := os.ReadFile(ghEnv)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		if k, delim, ok := strings.Cut(lines[i], "<<"); ok { // KEY<<DELIM … DELIM
			var v []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				v = append(v, lines[i])
			}
			env = append(env, k+"="+strings.Join(v, "\n"))
			continue
		}
		if lines[i] != "" {
			env = append(env, lines[i])
		}
	}
	return env
}

// jobStep reads a step of the agent job, with the job's env before its own.
func jobStep(t *testing.T, path, name string) step {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Env   yaml.Node `yaml:"env"`
			Steps []struct {
				Name string    `yaml:"name"`
				Env  yaml.Node `yaml:"env"`
				Run  string    `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	job, ok := wf.Jobs["agent"]
	if !ok {
		t.Fatalf("%s has no agent job", path)
	}
	var s step
	pairs := func(n *yaml.Node) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			s.env = append(s.env, [2]string{n.Content[i].Value, n.Content[i+1].Value})
		}
	}
	pairs(&job.Env)
	for _, st := range job.Steps {
		if st.Name == name {
			pairs(&st.Env)
			s.script = st.Run
			return s
		}
	}
	t.Fatalf("%s has no step %q", path, name)
	return s
}

var exprRe = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// evaluate stands in for GitHub: each ${{ }} becomes the value the job would see.
func evaluate(v string, values map[string]string) string {
	return exprRe.ReplaceAllStringFunc(v, func(m string) string {
		e := exprRe.FindStringSubmatch(m)[1]
		if e == "'${{'" {
			return "${{"
		}
		return values[e] // anything else evaluates to an empty string, as for a missing input
	})
}

func TestSmokeGitHubActions(t *testing.T) {
	for _, preset := range agent.Names() {
		t.Run(preset, func(t *testing.T) {
			program := smoke(t, preset)
			bin := autonomyBinary(t)
			checkout := newRepo(t)
			prof := sdlcProfile(t, "gh-actions", preset)
			if out, err := run(t, checkout, os.Environ(), "", bin, "compile", prof, "--target", "gh-actions", "--out", checkout); err != nil {
				t.Fatalf("compile: %v\n%s", err, out)
			}
			mustGit(t, checkout, "add", "-A")
			mustGit(t, checkout, "commit", "-q", "-m", "install the fleet")
			wf := filepath.Join(checkout, ".github", "workflows", "develop.yml")
			st := agentStep(t, wf, "develop")

			fake := modelfake.Start(developScript()...)
			defer fake.Close()
			p, _ := agent.Lookup(preset)
			values := map[string]string{
				"secrets." + p.CredentialEnv: "sk-smoke-not-a-key",
				"vars.AUTONOMY_MODEL_URL":    baseURL(fake, preset),
				"github.token":               "ghs_smoke",
			}
			temp := t.TempDir()
			// What a runner sets; PATH holds the pinned CLI as the install step leaves it.
			env := []string{
				"PATH=" + filepath.Dir(program) + string(os.PathListSeparator) + os.Getenv("PATH"),
				"HOME=" + t.TempDir(), "RUNNER_TEMP=" + temp, "GITHUB_WORKSPACE=" + checkout,
				"GITHUB_ACTIONS=true", "CI=true", "RUNNER_OS=Linux", "RUNNER_ARCH=X64",
			}
			env = withProxy(t, wf, bin, checkout, env, values)
			for _, kv := range st.env {
				env = append(env, kv[0]+"="+evaluate(kv[1], values))
			}
			script := filepath.Join(temp, "step.sh")
			if err := os.WriteFile(script, []byte(st.script), 0o600); err != nil {
				t.Fatal(err)
			}
			// GitHub's shell: bash runs a script as bash --noprofile --norc -eo pipefail FILE.
			out, err := run(t, checkout, env, "", "bash", "--noprofile", "--norc", "-eo", "pipefail", script)
			if err != nil || fake.Err() != nil {
				answer, _ := os.ReadFile(filepath.Join(temp, "autonomy-agent.json")) // claude's JSON, when it ran
				t.Fatalf("the agent step failed: %v; model: %v\n%s\n%s", err, fake.Err(), out, tail(string(answer), 2000))
			}
			if got := mustGit(t, checkout, "log", "-1", "--format=%s"); got != commitMsg {
				t.Fatalf("the checkout's tip is %q, want the agent's commit %q\n%s", got, commitMsg, out)
			}
			if s := fake.Scripted(); len(s) < 2 || !strings.Contains(s[0].Prompt, "develop — implement one ready task") {
				t.Fatalf("the skill did not reach the model")
			}
		})
	}
}

// TestSmokeArgvAccepted runs each preset's generated command — the argv in the compiled local
// launcher config, and the agent step of the generated workflow — for an actor without and one
// with a result, against a closed port: the pinned CLI must still be trying to connect after
// 15 s, not exit with a usage error.
func TestSmokeArgvAccepted(t *testing.T) {
	for _, preset := range agent.Names() {
		for _, target := range []string{"local", "gh-actions"} {
			for _, actor := range []string{"develop", "reviewer"} {
				t.Run(preset+"/"+target+"/"+actor, func(t *testing.T) {
					program := smoke(t, preset)
					bin := autonomyBinary(t)
					t.Parallel()
					p, _ := agent.Lookup(preset)
					ln, err := net.Listen("tcp", "127.0.0.1:0")
					if err != nil {
						t.Fatal(err)
					}
					closed := "http://" + ln.Addr().String()
					ln.Close()
					if preset == "codex" {
						closed += "/v1"
					}
					work := newRepo(t)
					if out, err := run(t, work, os.Environ(), "", bin, "compile", sdlcProfile(t, target, preset), "--target", target, "--out", work); err != nil {
						t.Fatalf("compile: %v\n%s", err, out)
					}
					skill, err := os.ReadFile(filepath.Join(work, ".autonomy", "skills", actor, "SKILL.md"))
					if err != nil {
						t.Fatal(err)
					}
					env := cliEnv(t, program, preset, closed)
					var argv []string
					reached := func() bool { return false }
					if target == "local" {
						argv = localArgv(t, work, actor, p, closed)
						argv[0] = program
					} else {
						wf := filepath.Join(work, ".github", "workflows", actor+".yml")
						st := agentStep(t, wf, actor)
						values := map[string]string{"secrets." + p.CredentialEnv: "sk-smoke-not-a-key", "vars.AUTONOMY_MODEL_URL": closed, "github.token": "ghs_smoke"}
						runnerTemp := t.TempDir()
						env = append(env, "RUNNER_TEMP="+runnerTemp, "GITHUB_WORKSPACE="+work)
						env = withProxy(t, wf, bin, work, env, values)
						// Behind the model proxy the CLI meets a proxy that answers 502 for the
						// closed upstream, and may stop retrying: its argv was accepted when its
						// request reached the proxy, which records it.
						reached = func() bool {
							data, _ := os.ReadFile(filepath.Join(runnerTemp, "autonomy-model", "transcript.jsonl"))
							return bytes.Contains(data, []byte(`"path":"/`))
						}
						for _, kv := range st.env {
							env = append(env, kv[0]+"="+evaluate(kv[1], values))
						}
						script := filepath.Join(t.TempDir(), "step.sh")
						if err := os.WriteFile(script, []byte(st.script), 0o600); err != nil {
							t.Fatal(err)
						}
						argv = []string{"bash", "--noprofile", "--norc", "-eo", "pipefail", script}
					}
					stillConnecting(t, work, env, string(skill), argv, reached)
				})
			}
		}
	}
}

// localArgv is an actor's argv from its compiled launcher config, filled as the runner fills it.
func localArgv(t *testing.T, dir, actor string, p agent.Preset, proxy string) []string {
	t.Helper()
	var cfg struct {
		Command struct {
			Argv []string `json:"argv"`
		} `json:"command"`
	}
	data, err := os.ReadFile(filepath.Join(dir, ".autonomy", "local", "actors", actor+".json"))
	if err == nil {
		err = json.Unmarshal(data, &cfg)
	}
	if err != nil || len(cfg.Command.Argv) == 0 {
		t.Fatalf("%s's launcher config: %v", actor, err)
	}
	temp := t.TempDir()
	schema := filepath.Join(temp, "schema.json")
	clean := `{"type":"object","properties":{"verdict":{"type":"string"}},"required":["verdict"],"additionalProperties":false}`
	if err := os.WriteFile(schema, []byte(clean), 0o600); err != nil {
		t.Fatal(err)
	}
	common := mustGit(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	argv, err := p.Fill(cfg.Command.Argv, map[string]string{
		agent.Result: filepath.Join(temp, "result.json"), agent.Schema: schema, agent.SchemaJSON: clean,
		agent.GitDir: common, agent.WorktreeGitDir: common, agent.Proxy: proxy,
	})
	if err != nil {
		t.Fatal(err)
	}
	return argv
}

// stillConnecting starts argv and fails unless it is still running after 15 s, or it exited
// after its model request reached where reached looks.
func stillConnecting(t *testing.T, dir string, env []string, stdin string, argv []string, reached func() bool) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-exited }()
	select {
	case err := <-exited:
		exited <- err
		if reached() {
			return
		}
		t.Fatalf("exited within 15 s (%v) instead of trying to reach the model:\n%s\nargv: %q", err, tail(out.String(), 2000), argv)
	case <-time.After(15 * time.Second):
		t.Logf("still trying to connect after 15 s; output so far:\n%s", tail(out.String(), 400))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestSmokeClaudeSandbox pins down what the claude preset's local sandbox lets a command do:
// write its workspace and not outside it, and reach the network only with network: true (its
// proxy answers 403 blocked-by-allowlist otherwise; with it, the request goes out).
func TestSmokeClaudeSandbox(t *testing.T) {
	program := smoke(t, "claude")
	p, _ := agent.Lookup("claude")
	for _, network := range []bool{true, false} {
		t.Run(fmt.Sprintf("network=%t", network), func(t *testing.T) {
			work := newRepo(t)
			// Not in t.TempDir(), whose name holds the subtest's "=": Claude Code asks approval
			// for a command naming such a path, and the sandbox is never reached.
			outsideDir, err := os.MkdirTemp("", "outside-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(outsideDir)
			outside := filepath.Join(outsideDir, "outside.txt")
			fake := modelfake.Start(modelfake.Turn{Shell: "echo x > in.txt && echo in-ok; touch " + outside + " && echo outside-ok; curl -sS -m 10 -i http://example.com/ 2>&1 | head -3"}, modelfake.Turn{Text: "done"})
			defer fake.Close()
			common := mustGit(t, work, "rev-parse", "--path-format=absolute", "--git-common-dir")
			argv, err := p.Fill(p.Argv(agent.Options{Sandbox: agent.Sandbox{Network: network}}), map[string]string{
				agent.Result: filepath.Join(t.TempDir(), "result"), agent.GitDir: common, agent.WorktreeGitDir: common})
			if err != nil {
				t.Fatal(err)
			}
			argv[0] = program
			out, err := run(t, work, cliEnv(t, program, "claude", fake.AnthropicBaseURL()), "go", argv...)
			s := fake.Scripted()
			if err != nil || len(s) < 2 || len(s[1].ToolOutputs) == 0 {
				t.Fatalf("claude: %v (%d scripted requests)\n%s", err, len(s), out)
			}
			got := s[1].ToolOutputs[0]
			t.Logf("tool output:\n%s", got)
			if !strings.Contains(got, "in-ok") || strings.Contains(got, "outside-ok") {
				t.Errorf("want the workspace writable and %s not", outside)
			}
			if blocked := strings.Contains(got, "blocked-by-allowlist"); blocked == network {
				t.Errorf("network %t, but the proxy blocked the request: %t", network, blocked)
			}
		})
	}
}
