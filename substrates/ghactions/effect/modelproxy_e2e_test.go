//go:build unix

package effect_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"github.com/autonomyhq/autonomy/internal/testfs"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghproxy"
)

// The agent job of profiles/hello, as compiled and run step by step from the parsed workflow
// (runner_test.go), with the real pinned CLI: the model proxy's step holds the credential and
// the agent's step reaches the scripted model only through the proxy, with a placeholder.

const proxyRealKey = "sk-e2eREALkey0123456789abcdefghij"

// helloWith is profiles/hello with its gh-actions box replaced.
func helloWith(t *testing.T, box string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hello")
	testfs.CopyTree(t, "../../../profiles/hello", dir)
	path := filepath.Join(dir, "ir.yml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const was = "gh-actions: { model: gpt-5-codex }"
	if !strings.Contains(string(data), was) {
		t.Fatalf("profiles/hello no longer says %q", was)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), was, "gh-actions: "+box, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// proxyRun is one run of the greeter's agent job.
type proxyRun struct {
	log      string
	failed   bool
	temp     string // the job's RUNNER_TEMP
	artifact string // the transcript artifact's directory
}

// runGreeter runs the agent job with cli on PATH against fake, the secret credEnv holding the
// real key.
func runGreeter(t *testing.T, profile, cli, credEnv string, fake *modelfake.Server, upstream string, wantFail bool) proxyRun {
	t.Helper()
	f := newFleetWith(t, profile, nil, cli)
	values := map[string]string{
		"github.token": "ghs_e2e", "secrets." + credEnv: proxyRealKey, "vars.AUTONOMY_MODEL_URL": upstream,
		"github.event_name": "schedule", "github.ref": "refs/heads/main", "github.run_id": "4242",
		"github.sha": gitRun(t, f.root, "--git-dir", f.origin, "rev-parse", "refs/heads/main"),
	}
	t.Cleanup(func() { killProxy(values["runner.temp"]) })
	log, _ := f.r.job(f.wf("greeter"), "agent", values, wantFail)
	return proxyRun{log: log, failed: wantFail, temp: values["runner.temp"], artifact: f.r.artifacts["4242/autonomy-transcript"]}
}

// killProxy ends a proxy a failed test left running.
func killProxy(temp string) {
	data, err := os.ReadFile(filepath.Join(temp, ghproxy.Dir, "proxy.pid"))
	if err != nil {
		return
	}
	var pid int
	if _, err := fmt.Sscan(string(data), &pid); err != nil || pid <= 0 {
		return
	}
	if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.Contains(string(cmd), "model-proxy") {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// generations counts the model requests the scripted endpoint answered, and checks that each
// request reached it with the real key and never the placeholder.
func generations(t *testing.T, fake *modelfake.Server) int64 {
	t.Helper()
	var n int64
	for _, r := range fake.Requests() {
		auth := r.Header.Get("Authorization") + r.Header.Get("X-Api-Key")
		if r.API != "" && !strings.Contains(auth, proxyRealKey) {
			t.Errorf("%s %s reached the model without the real key", r.Method, r.Path)
		}
		if strings.Contains(auth, "autonomy-proxy-") {
			t.Errorf("%s %s carried the placeholder upstream", r.Method, r.Path)
		}
		if r.Method == "POST" && (strings.HasSuffix(r.Path, "/responses") || strings.HasSuffix(r.Path, "/messages")) {
			n++
		}
	}
	return n
}

// checkBill checks the usage file and the transcript uploaded, and the step summary, against
// what the scripted endpoint answered: 100 input and 10 output tokens per generation.
func checkBill(t *testing.T, run proxyRun, n int64) ghproxy.Record {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(run.artifact, ghproxy.UsageFile))
	if err != nil {
		t.Fatalf("no usage in the transcript artifact: %v\n%s", err, run.log)
	}
	var rec ghproxy.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if u := rec.Usage; u.Requests != n || u.InputTokens != 100*n || u.OutputTokens != 10*n || u.Estimated {
		t.Errorf("usage %+v, want %d requests of 100 in / 10 out each", u, n)
	}
	tr, err := os.ReadFile(filepath.Join(run.artifact, ghproxy.TranscriptFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(tr), proxyRealKey) {
		t.Error("the transcript holds the real key")
	}
	var forwarded, in, out int64
	for _, line := range strings.Split(strings.TrimSpace(string(tr)), "\n") {
		var e modelproxy.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("transcript line %q: %v", line, err)
		}
		if e.Usage.Requests == 1 {
			forwarded++
			in += e.Usage.InputTokens
			out += e.Usage.OutputTokens
		}
	}
	if forwarded != n || in != 100*n || out != 10*n {
		t.Errorf("transcript: %d generations, %d in, %d out; the model answered %d", forwarded, in, out, n)
	}
	summary, _ := os.ReadFile(filepath.Join(run.temp, "github_step_summary"))
	if !strings.Contains(string(summary), fmt.Sprintf("| requests | %d |", n)) || !strings.Contains(string(summary), fmt.Sprintf("| tokens | %d |", 110*n)) {
		t.Errorf("step summary:\n%s", summary)
	}
	return rec
}

// checkEnvTool checks the agent's own env tool output: the placeholder under credEnv, never
// the key.
func checkEnvTool(t *testing.T, fake *modelfake.Server, credEnv string) {
	t.Helper()
	scripted := fake.Scripted()
	if len(scripted) < 2 || len(scripted[1].ToolOutputs) == 0 {
		t.Fatalf("the env tool output never reached the model: %d scripted requests", len(scripted))
	}
	env := scripted[1].ToolOutputs[len(scripted[1].ToolOutputs)-1]
	if !strings.Contains(env, credEnv+"=autonomy-proxy-") {
		t.Errorf("the agent's env does not hold the placeholder as %s:\n%s", credEnv, env)
	}
	if strings.Contains(env, proxyRealKey) {
		t.Errorf("the agent's environment holds the real key")
	}
}

func TestModelProxyCodex(t *testing.T) {
	codex := agentclitest.Require(t, "codex")
	fake := modelfake.Start(modelfake.Turn{Shell: "env"}, modelfake.Turn{Text: "Done."})
	defer fake.Close()
	run := runGreeter(t, helloWith(t, "{ model: gpt-5-codex }"), codex, "OPENAI_API_KEY", fake, fake.OpenAIBaseURL(), false)
	if err := fake.Err(); err != nil {
		t.Fatalf("script: %v\n%s", err, run.log)
	}
	checkEnvTool(t, fake, "OPENAI_API_KEY")
	checkBill(t, run, generations(t, fake))
}

func TestModelProxyClaude(t *testing.T) {
	claude := agentclitest.Require(t, "claude")
	fake := modelfake.Start(modelfake.Turn{Shell: "env"}, modelfake.Turn{Text: "Done."})
	defer fake.Close()
	run := runGreeter(t, helloWith(t, "{ agent: claude, model: claude-sonnet-4-5 }"), claude, "ANTHROPIC_API_KEY", fake, fake.AnthropicBaseURL(), false)
	if err := fake.Err(); err != nil {
		t.Fatalf("script: %v\n%s", err, run.log)
	}
	checkEnvTool(t, fake, "ANTHROPIC_API_KEY")
	checkBill(t, run, generations(t, fake))
}

// TestModelProxyBudget: a budget of 2 requests stops a session scripted to make more; the job
// fails with the annotation, and the bill is the 2 the model answered.
func TestModelProxyBudget(t *testing.T) {
	codex := agentclitest.Require(t, "codex")
	fake := modelfake.Start(modelfake.Turn{Shell: "echo one"}, modelfake.Turn{Shell: "echo two"},
		modelfake.Turn{Shell: "echo three"}, modelfake.Turn{Text: "Done."})
	defer fake.Close()
	run := runGreeter(t, helloWith(t, "{ model: { name: gpt-5-codex, budget: { requests: 2 } } }"), codex, "OPENAI_API_KEY", fake, fake.OpenAIBaseURL(), true)
	if !strings.Contains(run.log, "::error::budget exhausted: 2 of 2 requests used") {
		t.Errorf("no annotation:\n%s", run.log)
	}
	if n := generations(t, fake); n != 2 {
		t.Errorf("the model answered %d requests, want 2", n)
	}
	if rec := checkBill(t, run, 2); rec.Exhausted != "budget exhausted: 2 of 2 requests used" {
		t.Errorf("usage record %+v", rec)
	}
}
