//go:build unix

package modelfake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
)

// cliTimeout bounds every agent CLI run; a run that hangs is killed with its
// whole process group and fails the test.
const cliTimeout = 90 * time.Second

type cliRun struct {
	stdout, stderr string
	err            error
}

// runCLI runs argv in dir with exactly env (plus PATH) and stdin, in its own
// process group, killed as a group at the timeout.
func runCLI(t *testing.T, dir string, env []string, stdin string, argv ...string) cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		// Reap stragglers the CLI left in its group (a shell it started).
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("%s timed out after %s\nstdout:\n%s\nstderr:\n%s", argv[0], cliTimeout, out.String(), errb.String())
	}
	return cliRun{stdout: out.String(), stderr: errb.String(), err: err}
}

// codexArgv is the argv that runs codex 0.169.0 non-interactively against a
// Responses endpoint; the prompt comes on stdin ("-").
func codexArgv(program, baseURL, sandbox string, extra ...string) []string {
	argv := []string{program, "exec",
		"--json", "--skip-git-repo-check", "--ephemeral", "--ignore-user-config",
		"--sandbox", sandbox,
		"-m", "gpt-5.5",
		"-c", "model_provider=modelfake",
		"-c", `model_providers.modelfake.name="modelfake"`,
		"-c", `model_providers.modelfake.base_url="` + baseURL + `"`,
		"-c", `model_providers.modelfake.wire_api="responses"`,
		"-c", `model_providers.modelfake.env_key="MODELFAKE_API_KEY"`,
	}
	argv = append(argv, extra...)
	return append(argv, "-")
}

// claudeArgv is the argv that runs Claude Code 2.1.330 non-interactively;
// the prompt comes on stdin.
func claudeArgv(program string, extra ...string) []string {
	argv := []string{program, "-p", "--output-format", "json",
		"--dangerously-skip-permissions", "--no-session-persistence",
		"--model", "claude-sonnet-4-5"}
	return append(argv, extra...)
}

func claudeEnv(home, baseURL string) []string {
	return []string{"HOME=" + home, "ANTHROPIC_BASE_URL=" + baseURL, "ANTHROPIC_API_KEY=sk-ant-modelfake",
		// Claude Code refuses --dangerously-skip-permissions as root unless
		// it is told it runs in a sandbox (CI containers run as root).
		"IS_SANDBOX=1"}
}

const skillPrompt = "SKILL: modelfake-proof\nWrite the proof file. PARAM_REF=refs/heads/feature-x"

func assertConversation(t *testing.T, fake *modelfake.Server, wantTurns int) {
	t.Helper()
	logRequests(t, fake)
	if err := fake.Err(); err != nil {
		t.Fatalf("script violation: %v", err)
	}
	scripted := fake.Scripted()
	if len(scripted) < wantTurns {
		t.Fatalf("got %d scripted requests, want at least %d", len(scripted), wantTurns)
	}
	first := scripted[0]
	if !strings.Contains(first.Prompt, "SKILL: modelfake-proof") || !strings.Contains(first.Prompt, "PARAM_REF=refs/heads/feature-x") {
		t.Errorf("the prompt did not reach the model; first request prompt ends:\n%s", tail(first.Prompt, 400))
	}
	second := scripted[1]
	if len(second.ToolOutputs) == 0 {
		t.Fatalf("second request carries no tool output")
	}
}

// logRequests lists what the CLI asked, so a -v run shows the traffic.
func logRequests(t *testing.T, fake *modelfake.Server) {
	t.Helper()
	for i, r := range fake.Requests() {
		t.Logf("request %d: %s %s api=%s aux=%v turn=%d model=%s tools=%d outputs=%d schema=%v conv=%s",
			i, r.Method, r.Path, r.API, r.Aux, r.Turn, r.Model, len(r.Tools), len(r.ToolOutputs), len(r.Schema) > 0, r.Conversation)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func TestCodexRunsShellAndAnswers(t *testing.T) {
	program := agentclitest.Require(t, "codex")
	fake := modelfake.Start(
		modelfake.Turn{Shell: "echo hi > proof.txt && echo wrote-proof"},
		modelfake.Turn{Text: "All done."},
	)
	defer fake.Close()
	work := t.TempDir()
	env := []string{"CODEX_HOME=" + t.TempDir(), "HOME=" + t.TempDir(), "MODELFAKE_API_KEY=sk-modelfake"}
	run := runCLI(t, work, env, skillPrompt, codexArgv(program, fake.OpenAIBaseURL(), "danger-full-access")...)
	if run.err != nil {
		t.Fatalf("codex: %v\nstdout:\n%s\nstderr:\n%s\nserver: %v", run.err, run.stdout, run.stderr, fake.Err())
	}
	got, err := os.ReadFile(filepath.Join(work, "proof.txt"))
	if err != nil || string(got) != "hi\n" {
		t.Fatalf("proof.txt = %q, %v; stdout:\n%s", got, err, run.stdout)
	}
	assertConversation(t, fake, 2)
	if out := fake.Scripted()[1].ToolOutputs; !strings.Contains(out[len(out)-1], "wrote-proof") {
		t.Errorf("tool output did not come back: %q", out)
	}
	if auth := fake.Scripted()[0].Header.Get("Authorization"); auth != "Bearer sk-modelfake" {
		t.Errorf("Authorization = %q, want the key from MODELFAKE_API_KEY", auth)
	}
	if !strings.Contains(run.stdout, `"type":"agent_message","text":"All done."`) {
		t.Errorf("final message missing from --json output:\n%s", run.stdout)
	}
	if strings.Contains(run.stdout, `"type":"error"`) {
		t.Errorf("codex reported an error item (a model it has no metadata for?):\n%s", run.stdout)
	}
}

func TestClaudeRunsShellAndAnswers(t *testing.T) {
	program := agentclitest.Require(t, "claude")
	fake := modelfake.Start(
		modelfake.Turn{Shell: "echo hi > proof.txt && echo wrote-proof"},
		modelfake.Turn{Text: "All done."},
	)
	defer fake.Close()
	work := t.TempDir()
	run := runCLI(t, work, claudeEnv(t.TempDir(), fake.AnthropicBaseURL()), skillPrompt, claudeArgv(program)...)
	if run.err != nil {
		t.Fatalf("claude: %v\nstdout:\n%s\nstderr:\n%s\nserver: %v", run.err, run.stdout, run.stderr, fake.Err())
	}
	got, err := os.ReadFile(filepath.Join(work, "proof.txt"))
	if err != nil || string(got) != "hi\n" {
		t.Fatalf("proof.txt = %q, %v; stdout:\n%s", got, err, run.stdout)
	}
	assertConversation(t, fake, 2)
	if out := fake.Scripted()[1].ToolOutputs; !strings.Contains(out[len(out)-1], "wrote-proof") {
		t.Errorf("tool output did not come back: %q", out)
	}
	var res struct {
		Result  string `json:"result"`
		IsError bool   `json:"is_error"`
	}
	if err := json.Unmarshal([]byte(run.stdout), &res); err != nil || res.IsError || res.Result != "All done." {
		t.Errorf("claude JSON output = %+v, %v:\n%s", res, err, run.stdout)
	}
}

// verdictSchema is a result schema in the strict form OpenAI structured
// outputs require (every property required, no additional properties).
const verdictSchema = `{"type":"object","properties":{"verdict":{"type":"string","enum":["approve","request-changes"]},"summary":{"type":"string"}},"required":["verdict","summary"],"additionalProperties":false}`

const verdict = `{"verdict":"approve","summary":"proof written"}`

func TestCodexStructuredResult(t *testing.T) {
	program := agentclitest.Require(t, "codex")
	fake := modelfake.Start(
		modelfake.Turn{Shell: "echo hi > proof.txt && echo wrote-proof"},
		modelfake.Turn{JSON: json.RawMessage(verdict)},
	)
	defer fake.Close()
	work, out := t.TempDir(), t.TempDir()
	schema := filepath.Join(out, "schema.json")
	if err := os.WriteFile(schema, []byte(verdictSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	last := filepath.Join(out, "result.json")
	env := []string{"CODEX_HOME=" + t.TempDir(), "HOME=" + t.TempDir(), "MODELFAKE_API_KEY=sk-modelfake"}
	run := runCLI(t, work, env, skillPrompt,
		codexArgv(program, fake.OpenAIBaseURL(), "danger-full-access", "--output-schema", schema, "-o", last)...)
	if run.err != nil {
		t.Fatalf("codex: %v\nstdout:\n%s\nstderr:\n%s\nserver: %v", run.err, run.stdout, run.stderr, fake.Err())
	}
	assertConversation(t, fake, 2)
	for i, r := range fake.Scripted() {
		if !jsonEqual(r.Schema, verdictSchema) {
			t.Errorf("request %d schema = %s, want the --output-schema file", i, r.Schema)
		}
	}
	got, err := os.ReadFile(last)
	if err != nil || !jsonEqual(got, verdict) {
		t.Fatalf("-o file = %q, %v; want %s", got, err, verdict)
	}
}

func TestClaudeStructuredResult(t *testing.T) {
	program := agentclitest.Require(t, "claude")
	fake := modelfake.Start(
		modelfake.Turn{Shell: "echo hi > proof.txt && echo wrote-proof"},
		modelfake.Turn{JSON: json.RawMessage(verdict)},
	)
	defer fake.Close()
	work := t.TempDir()
	run := runCLI(t, work, claudeEnv(t.TempDir(), fake.AnthropicBaseURL()), skillPrompt,
		claudeArgv(program, "--json-schema", verdictSchema)...)
	if run.err != nil {
		t.Fatalf("claude: %v\nstdout:\n%s\nstderr:\n%s\nserver: %v", run.err, run.stdout, run.stderr, fake.Err())
	}
	assertConversation(t, fake, 2)
	var res struct {
		Result           string          `json:"result"`
		IsError          bool            `json:"is_error"`
		StructuredOutput json.RawMessage `json:"structured_output"`
	}
	if err := json.Unmarshal([]byte(run.stdout), &res); err != nil || res.IsError || !jsonEqual(res.StructuredOutput, verdict) {
		t.Errorf("claude JSON output = %+v, %v:\n%s", res, err, run.stdout)
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

// A command that outlives codex's first wait is polled with write_stdin
// until it exits; only then is the next turn played.
func TestCodexWaitsForSlowCommand(t *testing.T) {
	program := agentclitest.Require(t, "codex")
	defer modelfake.SetCodexYield(100, 250)()
	fake := modelfake.Start(
		modelfake.Turn{Shell: "sleep 1; echo hi > proof.txt; echo slow-done"},
		modelfake.Turn{Shell: "cat proof.txt"},
		modelfake.Turn{Text: "All done."},
	)
	defer fake.Close()
	work := t.TempDir()
	env := []string{"CODEX_HOME=" + t.TempDir(), "HOME=" + t.TempDir(), "MODELFAKE_API_KEY=sk-modelfake"}
	run := runCLI(t, work, env, skillPrompt, codexArgv(program, fake.OpenAIBaseURL(), "danger-full-access")...)
	logRequests(t, fake)
	if run.err != nil || fake.Err() != nil {
		t.Fatalf("codex: %v, server: %v\nstdout:\n%s\nstderr:\n%s", run.err, fake.Err(), run.stdout, run.stderr)
	}
	s := fake.Scripted()
	if len(s) < 4 {
		t.Fatalf("%d scripted requests: the slow command was not polled", len(s))
	}
	last := s[len(s)-1]
	outs := strings.Join(last.ToolOutputs, "\n")
	if !strings.Contains(outs, "slow-done") || !strings.HasSuffix(strings.TrimSpace(last.ToolOutputs[len(last.ToolOutputs)-1]), "hi") {
		t.Errorf("tool outputs = %q; want slow-done, then the proof read back", last.ToolOutputs)
	}
	if last.Turn != 2 {
		t.Errorf("final request played turn %d, want 2", last.Turn)
	}
}

// TestCodexCodeModeRunsShellAndAnswers runs codex with its default model (no -m), for which codex
// 0.169.0 offers only code mode's exec tool (JavaScript calling exec_command), listed in an
// additional_tools input item: the script's shell turn still runs, and a slow command is waited for.
func TestCodexCodeModeRunsShellAndAnswers(t *testing.T) {
	program := agentclitest.Require(t, "codex")
	fake := modelfake.Start(
		modelfake.Turn{Shell: "sleep 1; echo hi > proof.txt && echo wrote-proof"},
		modelfake.Turn{Shell: "cat proof.txt"},
		modelfake.Turn{Text: "All done."},
	)
	defer fake.Close()
	defer modelfake.SetCodexYield(250, 250)()
	work := t.TempDir()
	env := []string{"CODEX_HOME=" + t.TempDir(), "HOME=" + t.TempDir(), "MODELFAKE_API_KEY=sk-modelfake"}
	argv := codexArgv(program, fake.OpenAIBaseURL(), "danger-full-access")
	for i := range argv {
		if argv[i] == "-m" {
			argv = append(argv[:i:i], argv[i+2:]...)
			break
		}
	}
	run := runCLI(t, work, env, skillPrompt, argv...)
	logRequests(t, fake)
	if run.err != nil || fake.Err() != nil {
		t.Fatalf("codex: %v, server: %v\nstdout:\n%s\nstderr:\n%s", run.err, fake.Err(), run.stdout, run.stderr)
	}
	s := fake.Scripted()
	if len(s) == 0 || !contains(s[0].Tools, "exec") || contains(s[0].Tools, "exec_command") {
		t.Fatalf("codex's default model did not get code mode (tools %v): the test no longer tests it", s[0].Tools)
	}
	got, err := os.ReadFile(filepath.Join(work, "proof.txt"))
	if err != nil || string(got) != "hi\n" {
		t.Fatalf("proof.txt = %q, %v; stdout:\n%s", got, err, run.stdout)
	}
	last := s[len(s)-1]
	if outs := strings.Join(last.ToolOutputs, "\n"); !strings.Contains(outs, "wrote-proof") || !strings.Contains(outs, "Process exited with code 0") {
		t.Errorf("tool outputs = %q; want the command's exit code and output", last.ToolOutputs)
	}
	if !strings.Contains(run.stdout, `"type":"agent_message","text":"All done."`) {
		t.Errorf("final message missing from --json output:\n%s", run.stdout)
	}
}
