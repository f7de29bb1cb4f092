package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/agentcli"
	"github.com/autonomyhq/autonomy/internal/bounded"
	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
	"github.com/autonomyhq/autonomy/internal/strictjson"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
)

// A skill's session in its pod: the entry point runs the actor's agent CLI (a preset of
// internal/agent, pinned, from the image) with the skill on stdin, in a fresh workspace. The pod
// is the agent's sandbox, as a GitHub Actions VM is (agent.Sandbox.None): the CLI's own sandbox
// needs user namespaces a restricted pod does not have. The agent reaches its model only through
// the fleet's model proxy (EnvModelURL), holding the placeholder key (EnvModelKey) under its
// credential's name; no credential is in the pod. Its tools are autonomy's MCP server, started
// by the CLI as `autonomy runner --target kubernetes mcp` (session_mcp.go), which checks every
// call against the actor's installed capabilities.

// EnvSubmitted is where the MCP server writes the result the agent submits (submit_result).
const EnvSubmitted = "AUTONOMY_SUBMITTED"

// MCPArgs are the arguments of the MCP server a skill's agent CLI starts (the autonomy binary
// that runs the session entry point, by its absolute path).
var MCPArgs = []string{"runner", "--target", Name, "mcp"}

// mcpEnv are the variables the MCP server reads (a CLI that gives its servers a minimal
// environment, codex, is told to pass these on).
var mcpEnv = []string{EnvSession, EnvActor, EnvDir, EnvParams, EnvSubmitted, "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"}

// agentSession is one run of a skill's agent CLI.
type agentSession struct {
	c      *sessionCall
	cfg    *ActorConfig
	p      agent.Preset
	params map[string]string
	work   string // the session's temp folder: workspace, home, result files
}

// runAgent runs the skill of cfg and returns its checked result.
func (c *sessionCall) runAgent(ctx context.Context, cfg *ActorConfig, params map[string]string) ([]byte, error) {
	p, ok := agent.Lookup(cfg.Agent.Preset)
	if !ok {
		return nil, fmt.Errorf("actor %q: unknown agent preset %q (compile again)", cfg.Actor, cfg.Agent.Preset)
	}
	p.Version = cfg.Agent.Version
	work, err := os.MkdirTemp("", "autonomy-session-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	s := &agentSession{c: c, cfg: cfg, p: p, params: params, work: work}
	return s.run(ctx)
}

func (s *agentSession) path(name string) string { return filepath.Join(s.work, name) }

func (s *agentSession) run(ctx context.Context) ([]byte, error) {
	for _, d := range []string{"workspace", "home"} {
		if err := os.Mkdir(s.path(d), 0o700); err != nil {
			return nil, err
		}
	}
	argv, err := s.argv()
	if err != nil {
		return nil, err
	}
	env, remove, err := s.p.TempEnv(s.env())
	defer remove()
	if err != nil {
		return nil, err
	}
	skill, err := os.Open(filepath.Join(s.c.dir, filepath.FromSlash(s.cfg.Behavior)))
	if err != nil {
		return nil, fmt.Errorf("the skill: %v (apply the compiled kustomization again)", err)
	}
	defer skill.Close()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin, cmd.Stderr = s.path("workspace"), env, skill, s.c.stderr
	cmd.Stdout = s.c.stdout
	var out *os.File
	if agent.Output(s.p.Output) == agent.OutputClaudeJSON {
		if out, err = os.Create(s.path("output.json")); err != nil {
			return nil, err
		}
		defer out.Close()
		cmd.Stdout = out
	}
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("its agent %s failed: %v", s.p.Describe(), err)
	}
	if out != nil {
		if err := s.collect(); err != nil {
			return nil, err
		}
	}
	if err := s.takeSubmitted(); err != nil {
		return nil, err
	}
	msg, err := s.c.result(s.cfg, s.path("result.json"))
	if err != nil {
		return nil, err
	}
	return msg, s.checkStatus(msg)
}

// argv is the preset's command for this session, its placeholders filled.
func (s *agentSession) argv() ([]string, error) {
	prog, err := s.program()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	argv := s.p.Argv(agent.Options{Model: s.cfg.Agent.Model, Sandbox: agent.Sandbox{None: true}, Result: s.cfg.Result != ""})
	argv = s.p.WithApprovedMCP(argv, agent.MCPServer{Command: exe, Args: MCPArgs, Env: mcpEnv})
	values := map[string]string{agent.Result: s.path("result.json"), agent.GitDir: s.path("workspace"), agent.WorktreeGitDir: s.path("workspace"),
		agent.Proxy: s.baseURL()}
	if s.cfg.Result != "" {
		raw, err := bounded.ReadFile(filepath.Join(s.c.dir, filepath.FromSlash(s.cfg.Result)), maxInstallBytes)
		if err != nil {
			return nil, fmt.Errorf("the actor's result contract: %v", err)
		}
		clean, err := agent.CleanSchema(raw)
		if err != nil {
			return nil, fmt.Errorf("the actor's result contract %s is %v", s.cfg.Result, err)
		}
		if err := os.WriteFile(s.path("schema.json"), clean, 0o600); err != nil {
			return nil, err
		}
		values[agent.Schema], values[agent.SchemaJSON] = s.path("schema.json"), string(clean)
	}
	argv, err = s.p.Fill(argv, values)
	if err != nil {
		return nil, err
	}
	argv[0] = prog
	return argv, nil
}

// program finds the preset's pinned CLI: in the agent cache the pod's env names
// (AUTONOMY_AGENT_CACHE, else $HOME/.cache/autonomy-agents), else on the pod's PATH (the image's
// global npm install).
func (s *agentSession) program() (string, error) {
	get := func(k string) string { return sessionenv.Lookup(s.c.env, k) }
	if path, ok := agentcli.Cached(agentcli.CacheDirIn(get), s.p.Name, s.p.Version, s.p.Bin); ok {
		return path, nil
	}
	for _, dir := range filepath.SplitList(get("PATH")) {
		full := filepath.Join(dir, s.p.Bin)
		if fi, err := os.Stat(full); filepath.IsAbs(dir) && err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return full, nil
		}
	}
	return "", fmt.Errorf("its agent %s is not in the image: %s is on no directory of $PATH (build the image with scripts/k8s/image/Dockerfile, which installs it with %s)", s.p.Describe(), s.p.Bin, s.p.InstallHint())
}

// baseURL is the model proxy's URL for the preset's API.
func (s *agentSession) baseURL() string {
	root := strings.TrimSuffix(sessionenv.Lookup(s.c.env, EnvModelURL), "/")
	if root == "" {
		return ""
	}
	if s.p.Anthropic() {
		return modelproxy.Anthropic.BaseURL(root)
	}
	return modelproxy.OpenAI.BaseURL(root)
}

// env is the agent CLI's environment: a script's (behaviorEnv), a home of its own, the proxy's
// URL and placeholder key under the preset's names, what it needs to offer the MCP tools at
// once, and to run without its own sandbox (the pod is one).
func (s *agentSession) env() []string {
	env := s.c.behaviorEnv(s.cfg, s.params, s.path("workspace"), s.path("result.json"))
	env = sessionenv.With(env, "HOME="+s.path("home"), EnvSubmitted+"="+s.path("submitted.json"),
		s.p.CredentialEnv+"="+sessionenv.Lookup(s.c.env, EnvModelKey))
	if u := s.baseURL(); u != "" {
		env = sessionenv.With(env, s.p.BaseURLEnv+"="+u)
	}
	return sessionenv.With(sessionenv.With(env, s.p.MCPEnv...), s.p.VMEnv...)
}

// collect turns a claude-json preset's output into its result file.
func (s *agentSession) collect() error {
	raw, err := bounded.ReadFile(s.path("output.json"), maxInstallBytes)
	if err != nil {
		return fmt.Errorf("the agent's output: %v", err)
	}
	msg, structured, err := agent.Extract(raw)
	fmt.Fprintln(s.c.stdout, msg)
	if err != nil {
		return err
	}
	data := []byte(msg)
	if s.cfg.Result != "" {
		if structured == nil {
			return fmt.Errorf("the agent returned no structured result, only: %.200s", msg)
		}
		data = structured
	}
	return os.WriteFile(s.path("result.json"), data, 0o600)
}

// takeSubmitted makes the result the agent submitted through submit_result, when it did, the
// session's result: its output for a declared contract that is not the default one, else the
// submission itself. A submission that says failed fails the session.
func (s *agentSession) takeSubmitted() error {
	raw, err := bounded.ReadFile(s.path("submitted.json"), MaxResultBytes-1)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("its submitted result: %v", err)
	}
	var r tools.Result
	if err := strictjson.Unmarshal(raw, &r); err != nil { // the keys the contract checks, exactly
		return fmt.Errorf("its submitted result is refused: %v", err)
	}
	if r.Status == "failed" {
		return fmt.Errorf("its agent reported its work failed: %s", r.Summary)
	}
	if !s.defaultContract() && len(r.Output) > 0 {
		raw = r.Output
	}
	return os.WriteFile(s.path("result.json"), raw, 0o600)
}

// defaultContract reports whether the actor's contract is the default one (autonomy.result.v1).
func (s *agentSession) defaultContract() bool {
	return s.cfg.Result == resultsDir+"/"+ir.DefaultContract+".json"
}

// checkStatus fails a session whose default-contract result says failed.
func (s *agentSession) checkStatus(msg []byte) error {
	if !s.defaultContract() {
		return nil
	}
	var r tools.Result
	if strictjson.Unmarshal(msg, &r) == nil && r.Status == "failed" {
		return fmt.Errorf("its agent reported its work failed: %s", r.Summary)
	}
	return nil
}
