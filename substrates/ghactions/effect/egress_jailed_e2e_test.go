//go:build linux

package effect_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/testfs"
)

// customAgent is your own agent command, a bash script: it tries another port of the runner's
// loopback, asks the model through the proxy it is pointed at with the key it holds, and leaves
// what it saw, and its environment, in the checkout for the test to read.
const customAgent = `#!/bin/bash
cat > /dev/null
out="$GITHUB_WORKSPACE/agent-report.txt"
{
  curl -sS --max-time 5 "http://127.0.0.1:$1/" || echo loopback-blocked
  echo "base=$OPENAI_BASE_URL"
  curl -sS --max-time 20 -X POST -H "Authorization: Bearer $OPENAI_API_KEY" -H 'Content-Type: application/json' \
    -d '{"model":"gpt-5-codex","input":"hi","stream":true}' "$OPENAI_BASE_URL/responses" || echo proxy-failed
} > "$out" 2>&1
env > "$GITHUB_WORKSPACE/agent-env.txt"
echo Done.
`

// TestEgressCustomAgentCommand: the agent job of an actor run by your own agent command, as
// compiled and run step by step from the parsed workflow: the command runs in the jail, where
// another port of the runner's loopback is unreachable, the model proxy (OPENAI_BASE_URL) answers
// the placeholder key it holds with the scripted model, which saw the real key, and no
// credential or write token is in its environment.
func TestEgressCustomAgentCommand(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other-reached") }))
	defer other.Close()
	bin := filepath.Join(cliHome(t), "bin")
	agent := filepath.Join(bin, "my-agent")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agent, []byte(customAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	fake := modelfake.Start(modelfake.Turn{Text: "Done."})
	defer fake.Close()
	run := runGreeter(t, helloWith(t, `{ agent: [my-agent, "`+port(other.URL)+`"] }`), agent, "OPENAI_API_KEY", fake, fake.OpenAIBaseURL(), false)
	if err := fake.Err(); err != nil {
		t.Fatalf("script: %v\n%s", err, run.log)
	}
	report, err := os.ReadFile(filepath.Join(run.temp, "workspace", "agent-report.txt"))
	if err != nil {
		t.Fatalf("the agent left no report: %v\n%s", err, run.log)
	}
	if r := string(report); strings.Contains(r, "other-reached") || !strings.Contains(r, "loopback-blocked") {
		t.Errorf("another loopback port from your own agent command:\n%s", r)
	}
	if r := string(report); !strings.Contains(r, `"type":"response.completed"`) || strings.Contains(r, "proxy-failed") {
		t.Errorf("the model through the proxy:\n%s", r)
	}
	if n := generations(t, fake); n != 1 {
		t.Errorf("the scripted model answered %d generations, want 1", n)
	}
	env, err := os.ReadFile(filepath.Join(run.temp, "workspace", "agent-env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	e := string(env)
	if strings.Contains(e, proxyRealKey) || strings.Contains(e, "ACTIONS_ID_TOKEN_REQUEST") {
		t.Errorf("a credential in your own agent command's environment:\n%s", e)
	}
	if !strings.Contains(e, "OPENAI_API_KEY=autonomy-proxy-") || !strings.Contains(e, "HTTPS_PROXY=") {
		t.Errorf("your own agent command holds no placeholder, or no egress proxy:\n%s", e)
	}
}

// TestEgressStepPlaybook: the agent job of a step-playbook actor, as compiled and run step by
// step from the parsed workflow, with the real pinned codex: autonomy playbook run runs in the
// jail, so the step's agent, scripted to use its shell tool, cannot reach another port of the
// runner's loopback, completes through the model proxy (the scripted model saw the real key
// only), and holds no credential in its environment; the run's envelope and artifacts, which
// the run writes in the jail, reach the steps after it.
func TestEgressStepPlaybook(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other-reached") }))
	defer other.Close()
	dir := filepath.Join(t.TempDir(), "steps")
	testfs.CopyTree(t, "../../../profiles/steps-triage", dir)
	const playbook = "# Probe\n\nProbe the network.\n\n## INPUTS\n\n- `ITEM` (string): the number of the issue\n- `REPORT` (text): what the reporter wrote\n\n" +
		"## STEP 1: Probe\n\nRun the probe.\n\n## ARTIFACTS\n\ntype: markdown\n"
	if err := os.WriteFile(filepath.Join(dir, "playbooks", "triage.md"), []byte(playbook), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFleetWith(t, dir, nil, agentclitest.Require(t, "codex"))
	fake := modelfake.Start(
		modelfake.Turn{Shell: "curl -sS --max-time 5 http://127.0.0.1:" + port(other.URL) + "/ || echo loopback-blocked; env > \"$GITHUB_WORKSPACE/agent-env.txt\""},
		modelfake.Turn{Text: "Done."})
	defer fake.Close()
	v := f.values(fake, "workflow_dispatch", map[string]string{"ITEM": strconv.Itoa(f.item), "REPORT": "probe"})
	v["secrets.OPENAI_API_KEY"] = proxyRealKey
	t.Cleanup(func() { killProxy(v["runner.temp"]) })
	out, ran := f.r.job(f.wf("triage"), "agent", v, false)
	if !ran || fake.Err() != nil {
		t.Fatalf("the agent job: ran %v, model %v\n%s", ran, fake.Err(), out)
	}
	if got := v["needs.agent.outputs.status"]; got != "ok" {
		t.Errorf("the playbook run's status is %q, want ok\n%s", got, out)
	}
	scripted := fake.Scripted()
	if len(scripted) < 2 || len(scripted[1].ToolOutputs) == 0 {
		t.Fatalf("the shell's output never reached the model\n%s", out)
	}
	if shell := scripted[1].ToolOutputs[len(scripted[1].ToolOutputs)-1]; strings.Contains(shell, "other-reached") || !strings.Contains(shell, "loopback-blocked") {
		t.Errorf("another loopback port from the step's agent:\n%s", shell)
	}
	if n := generations(t, fake); n < 2 {
		t.Errorf("the scripted model answered %d generations through the proxy, want 2 or more", n)
	}
	env, err := os.ReadFile(filepath.Join(v["runner.temp"], "workspace", "agent-env.txt"))
	if err != nil {
		t.Fatalf("the step's agent left no environment: %v\n%s", err, out)
	}
	if e := string(env); strings.Contains(e, proxyRealKey) || strings.Contains(e, "ACTIONS_ID_TOKEN_REQUEST") || !strings.Contains(e, "OPENAI_API_KEY=autonomy-proxy-") {
		t.Errorf("the step's agent's environment:\n%s", e)
	}
	if data, err := os.ReadFile(filepath.Join(f.r.artifacts["4242/autonomy-artifacts"], "artifact.md")); err != nil || !strings.Contains(string(data), "Done.") {
		t.Errorf("the playbook's artifact: %q %v\n%s", data, err, out)
	}
}
