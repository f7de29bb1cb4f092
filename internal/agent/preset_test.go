package agent

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func node(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("agent: "+src), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0].Content[1]
}

func TestParse(t *testing.T) {
	cases := []struct {
		src, preset, version string
		argv                 []string
		problem              string
		warning              bool
	}{
		{src: "codex", preset: "codex", version: "0.169.0"},
		{src: "claude", preset: "claude", version: "2.1.330"},
		{src: "{ preset: claude }", preset: "claude", version: "2.1.330"},
		{src: "{ preset: codex, version: 0.170.1 }", preset: "codex", version: "0.170.1", warning: true,
			problem: "agent: @openai/codex is pinned to 0.170.1, not 0.169.0, the version autonomy was tested with (make agent-smoke)"},
		{src: "[my-agent, --flag]", argv: []string{"my-agent", "--flag"}},
		{src: "gemini", preset: "codex", problem: `agent: unknown preset "gemini"`},
		{src: "{ version: 1.2.3 }", preset: "codex", problem: "agent has no preset"},
		{src: "{ preset: codex, version: ^1.2.3 }", preset: "codex", problem: `agent.version "^1.2.3" is not an exact version`},
		{src: "[]", preset: "codex", problem: "agent is empty"},
		{src: "[a, '']", preset: "codex", problem: "agent item must be a non-empty string"},
		{src: "['{git-dir}']", preset: "codex", problem: "agent item {git-dir} is a placeholder only presets use"},
		{src: "~", preset: "codex", problem: "agent is empty"},
	}
	for _, c := range cases {
		ch, probs := Parse(node(t, c.src))
		if c.problem == "" && len(probs) > 0 {
			t.Errorf("%s: unexpected %+v", c.src, probs)
		}
		if c.problem != "" {
			if len(probs) != 1 || !strings.Contains(probs[0].Message, c.problem) || probs[0].Warning != c.warning || probs[0].Node == nil {
				t.Errorf("%s: got %+v, want %q (warning %t)", c.src, probs, c.problem, c.warning)
			}
		}
		if c.argv != nil {
			if !slices.Equal(ch.Argv, c.argv) || !ch.Custom() {
				t.Errorf("%s: argv %q", c.src, ch.Argv)
			}
			continue
		}
		if ch.Custom() || ch.Preset.Name != c.preset || (c.version != "" && ch.Preset.Version != c.version) {
			t.Errorf("%s: got %s %s", c.src, ch.Preset.Name, ch.Preset.Version)
		}
	}
}

// The argv of every preset: the skill on stdin, the result asked for only with result:, and
// the sandbox chosen by the substrate.
func TestArgv(t *testing.T) {
	codex, _ := Lookup("codex")
	got := codex.Argv(Options{Model: "gpt-5", Result: true})
	want := []string{"codex", "exec", "--skip-git-repo-check", "--color", "never", "-c", "allow_login_shell=false", "--model", "gpt-5",
		"--sandbox", "workspace-write", "--add-dir", GitDir, "--add-dir", WorktreeGitDir,
		"-c", "sandbox_workspace_write.network_access=false",
		"-c", "sandbox_workspace_write.exclude_slash_tmp=true", "-c", "sandbox_workspace_write.exclude_tmpdir_env_var=true",
		Proxy, MCP, "--output-schema", Schema, "--output-last-message", Result, "-"}
	if !slices.Equal(got, want) {
		t.Errorf("codex:\n got %q\nwant %q", got, want)
	}
	if got := codex.Argv(Options{Sandbox: Sandbox{None: true}}); slices.Contains(got, "--sandbox") || !slices.Contains(got, "--dangerously-bypass-approvals-and-sandbox") || slices.Contains(got, Schema) {
		t.Errorf("codex on a VM: %q", got)
	}
	if got := codex.Argv(Options{Sandbox: Sandbox{Network: true}}); !slices.Contains(got, "sandbox_workspace_write.network_access=true") {
		t.Errorf("codex with network: %q", got)
	}
	claude, _ := Lookup("claude")
	got = claude.Argv(Options{Result: true, Sandbox: Sandbox{None: true}})
	if got[0] != "claude" || !slices.Contains(got, "--print") || !slices.Contains(got, SchemaJSON) || !slices.Contains(got, "--dangerously-skip-permissions") {
		t.Errorf("claude: %q", got)
	}
	for _, n := range Names() {
		p, _ := Lookup(n)
		if p.Tested() != p.Version || !versionRe().MatchString(p.Version) || p.InstallHint() != "npm install --global "+p.Package+"@"+p.Version {
			t.Errorf("%s: version %q, install %q", n, p.Version, p.InstallHint())
		}
	}
}

func TestFill(t *testing.T) {
	codex, _ := Lookup("codex")
	got, err := codex.Fill([]string{"x", Result, "-o" + Result, Proxy}, map[string]string{Result: "/r.json"})
	if err != nil || !slices.Equal(got, []string{"x", "/r.json", "-o" + Result}) {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := codex.Fill([]string{GitDir}, nil); err == nil || !strings.Contains(err.Error(), "{git-dir}") {
		t.Errorf("a placeholder without a value: %v", err)
	}
	got, _ = codex.Fill([]string{"x", Proxy, "-"}, map[string]string{Proxy: "http://127.0.0.1:9/v1"})
	if len(got) != 14 || got[0] != "x" || got[13] != "-" || !slices.Contains(got, `model_providers.autonomy.base_url="http://127.0.0.1:9/v1"`) || !slices.Contains(got, `web_search="disabled"`) {
		t.Errorf("proxy: %q", got)
	}
	claude, _ := Lookup("claude")
	if got := claude.ProxyArgs("http://x"); got != nil {
		t.Errorf("claude reads ANTHROPIC_BASE_URL itself: %q", got)
	}
}

func TestExtract(t *testing.T) {
	msg, st, err := Extract([]byte(`{"type":"result","subtype":"success","is_error":false,"result":"done","structured_output":{"verdict":"approve"}}` + "\n"))
	if err != nil || msg != "done" || string(st) != `{"verdict":"approve"}` {
		t.Errorf("got %q %s %v", msg, st, err)
	}
	if _, st, err := Extract([]byte(`{"type":"result","result":"hi","structured_output":null}`)); err != nil || st != nil {
		t.Errorf("no structured output: %s %v", st, err)
	}
	for in, want := range map[string]string{
		`{"type":"result","subtype":"error_max_turns","is_error":true,"result":"out of turns"}`: "error_max_turns",
		`not json`:              "not its JSON result",
		`{"type":"assistant"}`:  `is a "assistant"`,
		"warning\n{\"type\":1}": "not its JSON result",
	} {
		if _, _, err := Extract([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
	}
}

// The MCP placeholder gives each CLI the session's server the way it takes one: codex by its
// mcp_servers config, naming the variables the server reads (codex passes a server a minimal
// environment); claude by an inline --mcp-config, with tool search off so the tools are offered
// at once. Without a server, the placeholder expands to nothing.
func TestMCPPlaceholder(t *testing.T) {
	s := MCPServer{Command: "/opt/autonomy", Args: []string{"gh", "mcp"}, Env: []string{"GH_TOKEN", "AUTONOMY_ACTOR"}}
	codex, _ := Lookup("codex")
	argv := codex.Argv(Options{Sandbox: Sandbox{None: true}})
	if !slices.Contains(argv, MCP) {
		t.Fatalf("codex argv %q has no %s", argv, MCP)
	}
	got := strings.Join(codex.WithMCP(argv, s), " ")
	for _, want := range []string{`mcp_servers.autonomy.command="/opt/autonomy"`, `mcp_servers.autonomy.args=["gh","mcp"]`, `mcp_servers.autonomy.env_vars=["GH_TOKEN","AUTONOMY_ACTOR"]`} {
		if !strings.Contains(got, want) {
			t.Errorf("codex: %q lacks %q", got, want)
		}
	}
	claude, _ := Lookup("claude")
	cargv := claude.WithMCP(claude.Argv(Options{Sandbox: Sandbox{None: true}}), s)
	i := slices.Index(cargv, "--mcp-config")
	if i < 0 || !slices.Contains(cargv, "--strict-mcp-config") {
		t.Fatalf("claude argv %q has no --strict-mcp-config --mcp-config", cargv)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Type, Command string
			Args          []string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(cargv[i+1]), &cfg); err != nil {
		t.Fatal(err)
	}
	if a := cfg.MCPServers["autonomy"]; a.Type != "stdio" || a.Command != "/opt/autonomy" || !slices.Equal(a.Args, []string{"gh", "mcp"}) {
		t.Errorf("claude mcp config = %+v", cfg)
	}
	if slices.Contains(cargv, "--allowedTools") {
		t.Errorf("claude argv %q approves the tools without being asked to", cargv)
	}
	approved := claude.WithApprovedMCP(claude.Argv(Options{}), s)
	if j := slices.Index(approved, "--allowedTools"); j < 0 || j+1 >= len(approved) || approved[j+1] != "mcp__autonomy" {
		t.Errorf("claude argv %q does not allow the server's tools (a sandboxed session would ask, and nobody answers)", approved)
	}
	if got := strings.Join(codex.WithApprovedMCP(codex.Argv(Options{}), s), " "); !strings.Contains(got, `mcp_servers.autonomy.default_tools_approval_mode="approve"`) {
		t.Errorf("codex argv %q does not approve the server's tools", got)
	}
	if !slices.Contains(claude.MCPEnv, "ENABLE_TOOL_SEARCH=false") {
		t.Errorf("claude MCPEnv = %q", claude.MCPEnv)
	}
	filled, err := codex.Fill(argv, map[string]string{Result: "/r"})
	if err != nil || slices.Contains(filled, MCP) || strings.Contains(strings.Join(filled, " "), "mcp_servers") {
		t.Errorf("Fill without a server: %q, %v", filled, err)
	}
}

// LoginPaths names each preset's logins where env puts them: a variable's path when it is set,
// the home's folder or file otherwise; nothing for an unset variable or HOME, or a relative path.
func TestLoginPaths(t *testing.T) {
	env := map[string]string{"HOME": "/home/op", "CODEX_HOME": "/srv/codex", "CLAUDE_CONFIG_DIR": "rel"}
	lookup := func(k string) string { return env[k] }
	codex, _ := Lookup("codex")
	claude, _ := Lookup("claude")
	if got := strings.Join(codex.LoginPaths(lookup), " "); got != "/srv/codex /home/op/.codex" {
		t.Errorf("codex: %s", got)
	}
	if got := strings.Join(claude.LoginPaths(lookup), " "); got != "/home/op/.claude /home/op/.claude.json" {
		t.Errorf("claude: %s", got)
	}
	if got := codex.LoginPaths(func(string) string { return "" }); len(got) != 0 {
		t.Errorf("no HOME: %v", got)
	}
}
