package local

import (
	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
)

// withTools gives a preset's session its MCP server: a skill's agent, and each step's agent of
// a step playbook (the same server, acting as the same session). The server is the autonomy
// binary that runs the runner, by its absolute path, as autonomy runner --dir DIR mcp, which the
// CLI starts outside its sandbox and which acts as the session it runs inside (hands.go,
// wall.go). Its environment gets what the CLI needs to offer the tools at once
// (agent.Preset.MCPEnv). A session run by the operator's own command (AUTONOMY_LOCAL_AGENT), or
// by an explicit agent command, gets none. Its shell's PATH starts with the gh and bun shims
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
	return p.WithApprovedMCP(argv, agent.MCPServer{Command: exe, Args: []string{"runner", "--dir", sv.r.In.Dir, "mcp"}, Env: []string{SessionEnv, StateEnv}}), nil
}
