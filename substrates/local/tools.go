package local

import (
	"fmt"
	"path/filepath"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
)

// MCPConfigEnv names, in a session run by your own agent command (policy.box.local.agent, or
// AUTONOMY_LOCAL_AGENT), the MCP configuration file that starts the session's MCP server
// (agent.MCPConfig): its command to give an MCP client (docs/local.md, "The agent's tools").
const MCPConfigEnv = "AUTONOMY_MCP_CONFIG"

// withTools gives a preset's session its MCP server: a skill's agent, and each step's agent of
// a step playbook (the same server, acting as the same session). The server is the autonomy
// binary that runs the runner, by its absolute path, as autonomy runner --dir DIR mcp, which the
// CLI starts outside its sandbox and which acts as the session it runs inside (hands.go,
// wall.go). Its environment gets what the CLI needs to offer the tools at once
// (agent.Preset.MCPEnv). A session run by the operator's own command (AUTONOMY_LOCAL_AGENT), or
// by an explicit agent command, gets the server's configuration instead (mcpConfig). Its shell's PATH starts with the gh and bun shims
// (hands_shim.go).
func (sv *supervision) withTools(argv []string) ([]string, error) {
	c := sv.cfg.Command
	if !sv.cfg.Skill && !sv.cfg.Steps || c == nil || c.Preset == "" {
		return argv, nil
	}
	if over, err := AgentOverride(sessionenv.Lookup(sv.r.opts.Env, AgentEnv)); err != nil || over != nil {
		return argv, nil
	}
	p, ok := agent.Lookup(c.Preset)
	if !ok {
		return argv, nil // fill refuses it
	}
	exe, err := sv.r.exe()
	if err != nil {
		return nil, err
	}
	// Its shell's gh is the shim, before the real one (hands_shim.go).
	shims, err := sv.r.shimBin()
	if err != nil {
		return nil, err
	}
	sv.env = withPathFirst(sessionenv.With(sv.env, p.MCPEnv...), shims)
	return p.WithApprovedMCP(argv, sv.mcpServer(exe)), nil
}

// mcpServer is the session's MCP server, the binary exe that runs the runner.
func (sv *supervision) mcpServer(exe string) agent.MCPServer {
	return agent.MCPServer{Command: exe, Args: []string{"runner", "--dir", sv.r.In.Dir, "mcp"}, Env: []string{SessionEnv, StateEnv}}
}

// mcpConfig gives a skill's session run by your own agent command (no preset: the runner knows
// no flag of it) its MCP server as a configuration file in the shape MCP clients share, at
// MCPConfigEnv, in the session's own result folder (removed when it ends): the same server, the
// same tools, as a preset's session gets. The session's id is in the server's env, for a client
// that starts its servers with a minimal environment.
func (sv *supervision) mcpConfig() error {
	if !sv.cfg.Skill || sv.ownResult == "" {
		return nil
	}
	exe, err := sv.r.exe()
	if err != nil {
		return err
	}
	env := map[string]string{SessionEnv: sv.s.ID, DirEnv: sv.r.In.Dir}
	path := filepath.Join(filepath.Dir(sv.ownResult), "mcp.json")
	if err := writeNew(path, agent.MCPConfig(sv.mcpServer(exe), env), 0o600); err != nil {
		return fmt.Errorf("cannot write the session's MCP configuration: %v", err)
	}
	sv.env = sessionenv.With(sv.env, MCPConfigEnv+"="+path)
	return nil
}
