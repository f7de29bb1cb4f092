//go:build unix

package mcpserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/tools"
)

// The pinned CLIs call the server's tools for real: a comment within the actor's capabilities
// is recorded as a safe output; a launch outside agent:launch@develop and a create_item the
// actor may not make are refused, the refusal reaches the model, and nothing is recorded.

var script = []modelfake.Turn{
	{Tool: "comment", Args: json.RawMessage(`{"item":"7","body":"Triaged: ready for develop."}`)},
	{Tool: "launch", Args: json.RawMessage(`{"actor":"reviewer"}`)},
	{Tool: "comment", Args: json.RawMessage(`{"item":"7","body":"  "}`)},
	{Text: "Done."},
}

// serverArgv is the argv that makes this test binary the MCP server of a pm session.
func serverArgv(t *testing.T, outputs string) []string {
	grants, _ := json.Marshal([]tools.Grant{{Name: "tasks:converse"}, {Name: "agent:launch", Scope: "develop"}})
	return []string{serveFlag, outputs, "pm", string(grants)}
}

func runAgent(t *testing.T, env []string, argv ...string) string {
	t.Helper()
	out, err := agentclitest.Run(t, env, "Triage item 7.", argv...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", argv[0], err, out)
	}
	return out
}

func assertEffects(t *testing.T, fake *modelfake.Server, outputs string) {
	t.Helper()
	if err := fake.Err(); err != nil {
		t.Fatalf("script: %v", err)
	}
	f, err := os.Open(outputs)
	if err != nil {
		t.Fatalf("no safe outputs: %v", err)
	}
	defer f.Close()
	es, err := tools.ReadOutputs(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Tool != "comment" || es[0].Actor != "pm" || !strings.Contains(string(es[0].Input), "Triaged") {
		t.Fatalf("safe outputs = %+v, want the one comment", es)
	}
	scripted := fake.Scripted()
	last := scripted[len(scripted)-1].ToolOutputs
	joined := strings.Join(last, "\n")
	for _, want := range []string{"recorded", `refused: launch: actor "pm" may not act on "reviewer"`, "refused: comment: body is required"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the model never read %q; tool outputs:\n%s", want, joined)
		}
	}
}

func TestCodexCallsTheTools(t *testing.T) {
	program := agentclitest.Require(t, "codex")
	fake := modelfake.Start(script...)
	defer fake.Close()
	outputs := filepath.Join(t.TempDir(), "outputs.jsonl")
	exe, _ := os.Executable()
	args := serverArgv(t, outputs)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = strconv.Quote(a)
	}
	runAgent(t, []string{"CODEX_HOME=" + t.TempDir(), "HOME=" + t.TempDir(), "MODELFAKE_API_KEY=sk-fake"},
		program, "exec", "--json", "--skip-git-repo-check", "--ephemeral", "--ignore-user-config",
		"--dangerously-bypass-approvals-and-sandbox", "-m", "gpt-5.5",
		"-c", "model_provider=modelfake",
		"-c", `model_providers.modelfake.name="modelfake"`,
		"-c", `model_providers.modelfake.base_url="`+fake.OpenAIBaseURL()+`"`,
		"-c", `model_providers.modelfake.wire_api="responses"`,
		"-c", `model_providers.modelfake.env_key="MODELFAKE_API_KEY"`,
		"-c", "mcp_servers.autonomy.command="+strconv.Quote(exe),
		"-c", "mcp_servers.autonomy.args=["+strings.Join(quoted, ",")+"]",
		"-")
	assertEffects(t, fake, outputs)
}

func TestClaudeCallsTheTools(t *testing.T) {
	program := agentclitest.Require(t, "claude")
	fake := modelfake.Start(script...)
	defer fake.Close()
	outputs := filepath.Join(t.TempDir(), "outputs.jsonl")
	exe, _ := os.Executable()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"autonomy": map[string]any{
		"type": "stdio", "command": exe, "args": serverArgv(t, outputs)}}})
	runAgent(t, []string{"HOME=" + t.TempDir(), "ANTHROPIC_BASE_URL=" + fake.AnthropicBaseURL(), "ANTHROPIC_API_KEY=sk-ant-fake", "IS_SANDBOX=1", "ENABLE_TOOL_SEARCH=false"},
		program, "-p", "--output-format", "json", "--dangerously-skip-permissions", "--no-session-persistence",
		"--model", "claude-sonnet-4-5", "--strict-mcp-config", "--mcp-config", string(cfg))
	assertEffects(t, fake, outputs)
}
