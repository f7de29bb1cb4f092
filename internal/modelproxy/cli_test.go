//go:build unix

package modelproxy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/modelproxy"
)

// The pinned CLIs, through the proxy, against the scripted model: the
// session completes, the model saw the real credential, the agent's
// environment (printed by its own shell tool) held only the placeholder,
// and the proxy's usage is exactly what the scripted model reported.

func runAgent(t *testing.T, env []string, argv ...string) (string, error) {
	t.Helper()
	return agentclitest.Run(t, env, "Print your environment with the shell tool.", argv...)
}

// codexThrough is codex run through the proxy at proxyURL with the codex preset's proxy arguments
// (the model provider, its key in OPENAI_API_KEY, and no web search: the proxy refuses the
// provider's live search), unsandboxed as on a GitHub Actions VM, where codex would search live.
func codexThrough(t *testing.T, program, proxyURL string) []string {
	p, _ := agent.Lookup("codex")
	argv := []string{program, "exec", "--json", "--skip-git-repo-check", "--ephemeral", "--ignore-user-config",
		"--sandbox", "danger-full-access", "-m", "gpt-5.5"}
	return append(append(argv, p.ProxyArgs(proxyURL+"/openai/v1")...), "-")
}

// assertThroughProxy checks what the model and the agent saw.
func assertThroughProxy(t *testing.T, fake *modelfake.Server, h *harness, realKey string) {
	t.Helper()
	if err := fake.Err(); err != nil {
		t.Fatalf("script: %v", err)
	}
	var generations int64
	for _, r := range fake.Requests() {
		auth := r.Header.Get("Authorization") + r.Header.Get("X-Api-Key")
		if r.API != "" && !strings.Contains(auth, realKey) {
			t.Errorf("%s %s reached the model without the real key", r.Method, r.Path)
		}
		if strings.Contains(auth, placeholder) {
			t.Errorf("%s %s carried the placeholder upstream", r.Method, r.Path)
		}
		if r.Method == "POST" && (strings.HasSuffix(r.Path, "/responses") || strings.HasSuffix(r.Path, "/messages")) {
			generations++
		}
	}
	scripted := fake.Scripted()
	if len(scripted) < 2 || len(scripted[1].ToolOutputs) == 0 {
		t.Fatalf("the env tool output never reached the model: %d scripted requests", len(scripted))
	}
	envOut := scripted[1].ToolOutputs[len(scripted[1].ToolOutputs)-1]
	if !strings.Contains(envOut, "OPENAI_API_KEY="+placeholder) && !strings.Contains(envOut, "ANTHROPIC_API_KEY="+placeholder) {
		t.Errorf("the agent's env did not show the placeholder:\n%s", envOut)
	}
	if strings.Contains(envOut, realKey) {
		t.Errorf("the agent's environment holds the real key")
	}
	// The agent may exit as soon as it has read the last answer, before the proxy has settled
	// that request: wait for it (Listen's shutdown does the same for a real run).
	deadline := time.Now().Add(10 * time.Second)
	for (h.proxy.Usage().Requests < generations || int64(len(h.entries(t))) < generations) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	u := h.proxy.Usage()
	if u.Requests != generations || u.InputTokens != 100*generations || u.OutputTokens != 10*generations || u.Estimated {
		t.Errorf("usage %+v, want %d requests of 100 in / 10 out each", u, generations)
	}
	if es := h.entries(t); int64(len(es)) < generations || strings.Contains(h.log.String(), realKey) {
		t.Errorf("transcript: %d entries for %d generations, or it holds the key", len(es), generations)
	}
}

func TestCodexThroughTheProxy(t *testing.T) {
	program := agentclitest.Require(t, "codex")
	fake := modelfake.Start(modelfake.Turn{Shell: "env"}, modelfake.Turn{Text: "Done."})
	defer fake.Close()
	h := start(t, fake.URL(), nil)
	env := []string{"CODEX_HOME=" + t.TempDir(), "HOME=" + t.TempDir(), "OPENAI_API_KEY=" + placeholder}
	out, err := runAgent(t, env, codexThrough(t, program, h.url)...)
	if err != nil {
		t.Fatalf("codex: %v\n%s", err, out)
	}
	assertThroughProxy(t, fake, h, openAIKey)
}

func TestClaudeThroughTheProxy(t *testing.T) {
	program := agentclitest.Require(t, "claude")
	fake := modelfake.Start(modelfake.Turn{Shell: "env"}, modelfake.Turn{Text: "Done."})
	defer fake.Close()
	h := start(t, fake.URL(), nil)
	env := []string{"HOME=" + t.TempDir(), "ANTHROPIC_BASE_URL=" + h.url + "/anthropic", "ANTHROPIC_API_KEY=" + placeholder, "IS_SANDBOX=1"}
	out, err := runAgent(t, env, program, "-p", "--output-format", "json", "--dangerously-skip-permissions",
		"--no-session-persistence", "--model", "claude-sonnet-4-5")
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	assertThroughProxy(t, fake, h, anthropicKey)
}

func TestCodexStopsAtTheBudget(t *testing.T) {
	program := agentclitest.Require(t, "codex")
	fake := modelfake.Start(modelfake.Turn{Shell: "echo one"}, modelfake.Turn{Shell: "echo two"},
		modelfake.Turn{Shell: "echo three"}, modelfake.Turn{Text: "Done."})
	defer fake.Close()
	h := start(t, fake.URL(), func(c *modelproxy.Config) { c.Budget = modelproxy.Budget{Requests: 2} })
	env := []string{"CODEX_HOME=" + t.TempDir(), "HOME=" + t.TempDir(), "OPENAI_API_KEY=" + placeholder}
	out, err := runAgent(t, env, codexThrough(t, program, h.url)...)
	if err == nil {
		t.Fatalf("codex finished a 4-turn script on a budget of 2 requests:\n%s", out)
	}
	if !strings.Contains(out, "budget exhausted: 2 of 2 requests used") {
		t.Errorf("codex's output does not show the reason:\n%s", out)
	}
	if got := h.proxy.Exhausted(); got != "budget exhausted: 2 of 2 requests used" {
		t.Errorf("Exhausted() = %q", got)
	}
	if u := h.proxy.Usage(); u.Requests != 2 {
		t.Errorf("usage %+v, want 2 requests", u)
	}
}
