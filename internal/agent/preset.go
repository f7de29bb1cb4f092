// Package agent holds the agent presets both substrates run a skill with: each a real CLI pinned
// to an exact npm version, with the argv its non-interactive mode accepts, how the skill, the
// model, the credential and a model proxy reach it, how its final message and structured result
// reach AUTONOMY_RESULT, and the sandbox it runs in. The presets are data, in one place; the
// smoke tests (make agent-smoke) run every one of them for real against a scripted model.
package agent

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Placeholders a preset's argv holds in place of a whole word; the launcher fills them for the
// session (Fill locally, an env reference on gh-actions). Never part of a longer word.
const (
	// Result is the absolute path of the session's result file (AUTONOMY_RESULT).
	Result = "{result}"
	// Schema is the absolute path of the result schema, without its DO NOT EDIT member.
	Schema = "{schema}"
	// SchemaJSON is the text of that schema (for a CLI that takes the schema inline).
	SchemaJSON = "{schema-json}"
	// GitDir is the absolute path of the git directory the workspace commits into (for a
	// worktree, the repository's common directory): the sandbox leaves it writable.
	GitDir = "{git-dir}"
	// WorktreeGitDir is a worktree's own git directory (HEAD, index), also writable; outside a
	// linked worktree it is GitDir again.
	WorktreeGitDir = "{worktree-git-dir}"
	// Proxy stands for the words that point the CLI at a model proxy: none when the preset's
	// BaseURLEnv is unset or empty, or when the CLI reads BaseURLEnv itself.
	Proxy = "{proxy}"
	// MCP stands for the words that give the CLI the session's MCP server (autonomy's tools):
	// none when the launcher has no server for the session.
	MCP = "{mcp}"
)

// MCPServer is how a launcher starts the session's MCP server: an absolute program path, its
// arguments, and the names of the environment variables the server reads (a CLI that gives its
// servers a minimal environment, like codex, is told to pass them on).
type MCPServer struct {
	Command string
	Args    []string
	Env     []string
}

// Output says how a preset's final message and structured result leave the CLI.
type Output string

const (
	// OutputFile: the CLI writes its last message (the structured result when a schema was
	// given) to the Result path itself.
	OutputFile Output = "file"
	// OutputClaudeJSON: the CLI prints one JSON object on stdout; its "structured_output" is the
	// structured result and its "result" the final message (Extract).
	OutputClaudeJSON Output = "claude-json"
)

// Preset is one agent CLI, pinned. The skill reaches it on stdin, as its prompt: nothing is
// written into the workspace's own skill folders (.codex/skills, .claude/skills), which stay the
// repository's.
type Preset struct {
	// Name is what policy.box.<substrate>.agent names.
	Name string
	// Package is the npm package, Version its exact pinned version.
	Package, Version string
	// Bin is the program the package installs.
	Bin string
	// CredentialEnv is the env var the CLI reads its model credential from; BaseURLEnv the one
	// that points it at a model proxy (a custom base URL).
	CredentialEnv, BaseURLEnv string
	// ConfigEnv are the env vars, other than the credential and the base URL, the CLI reads its
	// own configuration from (its home, its telemetry switches): a local session's environment,
	// an allowlist, passes them through from the runner's.
	ConfigEnv []string
	// Logins are where the CLI keeps its own login (its credential, and the account it names):
	// folders and files, each "$VAR" (the path an env var names) or "~/path" (under HOME). A
	// session behind the model proxy needs none of them, and its jail hides them (LoginPaths).
	Logins []string
	// Output is how its final message and structured result leave it.
	Output Output
	// VMEnv is env the CLI needs to run unsandboxed in a VM that is the sandbox (NAME=value).
	VMEnv []string
	// DefaultModel is the model the preset runs when the box names none ("" for the CLI's own).
	DefaultModel string
	// PrivateTmp: a launcher runs the CLI with a TMPDIR of its own, made for the session and
	// removed after it (TempEnv). Claude Code keeps a folder per working directory
	// ($TMPDIR/claude-UID/<cwd>/<session>), its sandbox's sockets ($TMPDIR/claude-http-*.sock)
	// and more under $TMPDIR and removes none of them: in the shared temporary directory they
	// would outlive the session and pile up. codex refuses to create the link to itself its sandbox
	// executes (codex-linux-sandbox, under $CODEX_HOME/tmp/arg0) when CODEX_HOME is under the
	// temporary directory ($TMPDIR, else /tmp), and then every sandboxed command fails with
	// "bwrap: execvp codex-linux-sandbox: No such file or directory". A fresh TMPDIR never holds
	// CODEX_HOME, wherever the CLI and CODEX_HOME live.
	PrivateTmp bool
	// Helpers are the programs its local sandbox runs, which must be on PATH.
	Helpers []Helper
	// MCPEnv is env the CLI needs to offer an MCP server's tools at once (NAME=value).
	MCPEnv []string
	// MCPApprove are the words that let the CLI call the session's server's tools without
	// asking, where its sandbox would ask (outside a VM's bypass) and nobody answers a session;
	// the tools are checked on the trusted side. They follow the MCP words.
	MCPApprove []string

	base  []string // the non-interactive command, up to the options
	model func(string) []string
	// proxy is the words that make the CLI call url, for a CLI that ignores BaseURLEnv.
	proxy   func(url string) []string
	mcp     func(MCPServer) []string
	sandbox func(Sandbox) []string
	result  []string // added when the actor declares result:
	message []string // added when it does not
	last    []string // the final words (the prompt on stdin)
}

// Helper is a program a preset's local sandbox runs.
type Helper struct {
	// Program is looked up on PATH; Package is the Debian/Ubuntu package that installs it.
	Program, Package string
	// Bundled: the CLI falls back to a copy of its own when Program is missing.
	Bundled bool
}

// Sandbox is what the agent may touch.
type Sandbox struct {
	// None: the environment is the sandbox (a GitHub Actions VM); the agent runs unconfined in it.
	None bool
	// Network lets a sandboxed agent reach the network (the model endpoint is always reachable:
	// the CLI itself calls it, outside the sandbox).
	Network bool
}

// Default is the preset a box runs when it names none.
const Default = "codex"

// presets are the built-in presets by name. Each Version is the one `make agent-smoke` ran.
var presets = map[string]Preset{
	"codex": {
		Name: "codex", Package: "@openai/codex", Version: "0.169.0", Bin: "codex",
		CredentialEnv: "OPENAI_API_KEY", BaseURLEnv: "OPENAI_BASE_URL",
		ConfigEnv: []string{"CODEX_HOME"},
		Logins:    []string{"$CODEX_HOME", "~/.codex"},
		Output:    OutputFile, PrivateTmp: true,
		Helpers: []Helper{{Program: "bwrap", Package: "bubblewrap", Bundled: true}},
		// codex 0.169.0 has no --full-auto: exec never asks for approval, the sandbox is chosen.
		// Its shell tool runs bash as a login shell by default, whose /etc/profile resets PATH
		// (Debian's does): the session's PATH, with autonomy at its front, is kept by a
		// non-login shell (allow_login_shell, in codex's ConfigToml since 0.16x).
		base:  []string{"codex", "exec", "--skip-git-repo-check", "--color", "never", "-c", "allow_login_shell=false"},
		model: func(m string) []string { return []string{"--model", m} },
		sandbox: func(s Sandbox) []string {
			if s.None {
				return []string{"--dangerously-bypass-approvals-and-sandbox"}
			}
			// workspace-write keeps .git read-only: the git directory is added as a writable
			// root so the agent can commit, and nothing else outside its workspace is writable.
			// /tmp and $TMPDIR, writable by default, are excluded.
			return []string{"--sandbox", "workspace-write", "--add-dir", GitDir, "--add-dir", WorktreeGitDir,
				"-c", fmt.Sprintf("sandbox_workspace_write.network_access=%t", s.Network),
				"-c", "sandbox_workspace_write.exclude_slash_tmp=true",
				"-c", "sandbox_workspace_write.exclude_tmpdir_env_var=true"}
		},
		// codex 0.169.0 ignores OPENAI_BASE_URL (it dials api.openai.com): a proxy is a model
		// provider of its own, speaking the Responses API, keyed by OPENAI_API_KEY. Its web
		// search is off: OpenAI would search live for the session (unsandboxed, codex asks for
		// that even when told "cached"), which the proxy refuses (modelproxy, reach.go).
		proxy: func(url string) []string {
			return []string{"-c", `model_provider="autonomy"`,
				"-c", `model_providers.autonomy.name="autonomy"`,
				"-c", `model_providers.autonomy.base_url=` + strconv.Quote(url),
				"-c", `model_providers.autonomy.wire_api="responses"`,
				"-c", `model_providers.autonomy.env_key="OPENAI_API_KEY"`,
				"-c", `web_search="disabled"`}
		},
		MCPApprove: []string{"-c", `mcp_servers.autonomy.default_tools_approval_mode="approve"`},
		// codex starts an MCP server with a minimal environment: the variables it reads are named.
		mcp: func(s MCPServer) []string {
			return []string{"-c", "mcp_servers.autonomy.command=" + strconv.Quote(s.Command),
				"-c", "mcp_servers.autonomy.args=" + tomlList(s.Args),
				"-c", "mcp_servers.autonomy.env_vars=" + tomlList(s.Env)}
		},
		result:  []string{"--output-schema", Schema, "--output-last-message", Result},
		message: []string{"--output-last-message", Result},
		last:    []string{"-"},
	},
	"claude": {
		Name: "claude", Package: "@anthropic-ai/claude-code", Version: "2.1.330", Bin: "claude",
		CredentialEnv: "ANTHROPIC_API_KEY", BaseURLEnv: "ANTHROPIC_BASE_URL",
		ConfigEnv: []string{"CLAUDE_CONFIG_DIR", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY"},
		Logins:    []string{"$CLAUDE_CONFIG_DIR", "~/.claude", "~/.claude.json"},
		Output:    OutputClaudeJSON, PrivateTmp: true,
		// Claude Code refuses --dangerously-skip-permissions as root (self-hosted runners in
		// containers) unless told that it runs in a sandbox, which the job's VM is.
		VMEnv: []string{"IS_SANDBOX=1"},
		// Its sandbox runs commands under bubblewrap and proxies their network through socat;
		// without them it turns itself off and every shell command is refused.
		Helpers: []Helper{{Program: "bwrap", Package: "bubblewrap"}, {Program: "socat", Package: "socat"}},
		base:    []string{"claude", "--print", "--output-format", "json", "--no-session-persistence"},
		model:   func(m string) []string { return []string{"--model", m} },
		sandbox: func(s Sandbox) []string {
			if s.None {
				return []string{"--dangerously-skip-permissions"}
			}
			// Claude Code's own sandbox confines Bash to the working directories (--add-dir
			// included) and, without network, to no host; tools that would prompt are denied.
			return []string{"--permission-mode", "acceptEdits", "--add-dir", GitDir,
				"--settings", claudeSandbox(s.Network)}
		},
		// Claude Code defers MCP tools behind a tool search unless told not to; its stdio servers
		// inherit its environment.
		MCPEnv:     []string{"ENABLE_TOOL_SEARCH=false"},
		MCPApprove: []string{"--allowedTools", "mcp__autonomy"},
		mcp: func(s MCPServer) []string {
			return []string{"--strict-mcp-config", "--mcp-config", string(MCPConfig(s, nil))}
		},
		result: []string{"--json-schema", SchemaJSON},
	},
}

// claudeSandbox is Claude Code's settings for a sandboxed local session.
func claudeSandbox(network bool) string {
	net := `,"network":{"allowedDomains":[]}`
	if network {
		net = `,"network":{"allowedDomains":["*"]}`
	}
	return `{"sandbox":{"enabled":true,"autoAllowBashIfSandboxed":true,"allowUnsandboxedCommands":false` + net + `}}`
}

// Lookup returns the preset of that name.
func Lookup(name string) (Preset, bool) {
	p, ok := presets[name]
	return p, ok
}

// Names lists the presets, sorted.
func Names() []string {
	out := make([]string, 0, len(presets))
	for n := range presets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Options are what varies between the sessions of one preset.
type Options struct {
	// Model is the model to run ("" for the preset's default).
	Model string
	// Sandbox is what the agent may touch.
	Sandbox Sandbox
	// Result is true when the actor declares result: the structured result is asked for.
	Result bool
}

// Argv is the command for a session, with placeholders (Result, Schema, SchemaJSON, GitDir) for
// what only the launcher knows. The skill is fed on stdin.
func (p Preset) Argv(o Options) []string {
	argv := append([]string(nil), p.base...)
	if m := o.Model; m != "" || p.DefaultModel != "" {
		if m == "" {
			m = p.DefaultModel
		}
		argv = append(argv, p.model(m)...)
	}
	argv = append(argv, p.sandbox(o.Sandbox)...)
	if p.proxy != nil {
		argv = append(argv, Proxy)
	}
	if p.mcp != nil {
		argv = append(argv, MCP)
	}
	if o.Result {
		argv = append(argv, p.result...)
	} else {
		argv = append(argv, p.message...)
	}
	return append(argv, p.last...)
}

// CleanSchema is an installed result schema as a CLI is given it ({schema}, {schema-json}):
// without the DO NOT EDIT member "//", and without $schema, since a CLI validating with an
// older draft (Claude Code) refuses a 2020-12 meta-schema it does not know.
func CleanSchema(raw []byte) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	delete(doc, "//")
	delete(doc, "$schema")
	return json.Marshal(doc)
}

// Anthropic reports whether the CLI speaks Anthropic's Messages API (else OpenAI's).
func (p Preset) Anthropic() bool { return p.CredentialEnv == "ANTHROPIC_API_KEY" }

// Spec is the pinned npm package spec, e.g. @openai/codex@0.169.0.
func (p Preset) Spec() string { return p.Package + "@" + p.Version }

// Install is the command that installs the pinned CLI globally.
func (p Preset) Install() []string { return []string{"npm", "install", "--global", p.Spec()} }

// InstallHint is the install command as one line to show a person.
func (p Preset) InstallHint() string { return strings.Join(p.Install(), " ") }

// Describe names the preset and its pinned version, e.g. `codex (@openai/codex@0.169.0)`.
func (p Preset) Describe() string { return fmt.Sprintf("%s (%s)", p.Name, p.Spec()) }

// Placeholder reports whether w is one of the launcher's placeholders.
func Placeholder(w string) bool {
	switch w {
	case Result, Schema, SchemaJSON, GitDir, WorktreeGitDir, Proxy, MCP:
		return true
	}
	return false
}

// ProxyArgs is what Proxy expands to for a model proxy at url: nothing when url is empty or the
// CLI reads BaseURLEnv itself.
func (p Preset) ProxyArgs(url string) []string {
	if url == "" || p.proxy == nil {
		return nil
	}
	return p.proxy(url)
}

// MCPArgs is what MCP expands to for the session's server: nothing when the preset takes none or
// s has no command.
func (p Preset) MCPArgs(s MCPServer) []string {
	if p.mcp == nil || s.Command == "" {
		return nil
	}
	return p.mcp(s)
}

// WithMCP replaces the MCP placeholder of argv by the words that give the CLI server s.
func (p Preset) WithMCP(argv []string, s MCPServer) []string {
	return p.withMCP(argv, s, false)
}

// WithApprovedMCP is WithMCP followed by the words that approve the server's tools
// (MCPApprove): what a sandboxed session, which nobody answers, needs.
func (p Preset) WithApprovedMCP(argv []string, s MCPServer) []string {
	return p.withMCP(argv, s, true)
}

func (p Preset) withMCP(argv []string, s MCPServer, approve bool) []string {
	out := make([]string, 0, len(argv)+8)
	for _, w := range argv {
		if w == MCP {
			out = append(out, p.MCPArgs(s)...)
			if approve && len(p.MCPArgs(s)) > 0 {
				out = append(out, p.MCPApprove...)
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// MCPConfig is the MCP configuration, in the shape MCP clients share (Claude Code's
// --mcp-config, Claude Desktop's and others' mcpServers), that starts the server s as the
// stdio server "autonomy", with env (NAME: value) set for it when env is not empty.
func MCPConfig(s MCPServer, env map[string]string) []byte {
	server := map[string]any{"type": "stdio", "command": s.Command, "args": nonNil(s.Args)}
	if len(env) > 0 {
		server["env"] = env
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"autonomy": server}})
	return cfg
}

// tomlList is a list of strings as a TOML array (codex's -c values are TOML).
func tomlList(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = strconv.Quote(w)
	}
	return "[" + strings.Join(q, ",") + "]"
}

func nonNil(ws []string) []string {
	if ws == nil {
		return []string{}
	}
	return ws
}

// Fill replaces the placeholders of argv by their values (Proxy by the words of ProxyArgs of
// values[Proxy]; MCP, unless WithMCP expanded it, by nothing); a placeholder without a value is an error (the launcher knows every one it
// hands out).
func (p Preset) Fill(argv []string, values map[string]string) ([]string, error) {
	out := make([]string, 0, len(argv))
	for _, w := range argv {
		if !Placeholder(w) {
			out = append(out, w)
			continue
		}
		if w == MCP {
			continue // a session without a server (WithMCP expands it for one with)
		}
		v, ok := values[w]
		if !ok && w != Proxy {
			return nil, fmt.Errorf("the agent command holds %s, which this session has no value for", w)
		}
		if w == Proxy {
			out = append(out, p.ProxyArgs(v)...)
			continue
		}
		out = append(out, v)
	}
	return out, nil
}

// LoginPaths are the absolute paths of p's Logins in env (lookup reads one of its variables);
// an unset variable, or HOME, names none.
func (p Preset) LoginPaths(lookup func(string) string) []string { return HomePaths(p.Logins, lookup) }

// HomePaths are the absolute paths of list, each "$VAR" (the path an env var names) or "~/path"
// (under HOME), in env (lookup reads one of its variables); an unset variable, or HOME, names
// none.
func HomePaths(list []string, lookup func(string) string) []string {
	var out []string
	for _, l := range list {
		var path string
		if v, ok := strings.CutPrefix(l, "$"); ok {
			path = lookup(v)
		} else if rest, ok := strings.CutPrefix(l, "~/"); ok {
			if home := lookup("HOME"); home != "" {
				path = filepath.Join(home, rest)
			}
		}
		if filepath.IsAbs(path) {
			out = append(out, filepath.Clean(path))
		}
	}
	return out
}
