package playbook

import (
	"fmt"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/engine"
	"github.com/autonomyhq/autonomy/playbook/workflow"
)

// checkMCP checks what of a profile the mcp steps of its workflow playbooks use: every server
// they name is declared in policy.box.mcp.servers (positioned at the step, in the playbook), and
// no declared server's argv holds a secret literal (positioned at the word, in the profile).
func checkMCP(p *ir.Profile, flows []*workflow.Workflow) ir.Diagnostics {
	var diags ir.Diagnostics
	for _, s := range p.Policy.MCP {
		words := make([]string, 0, len(s.Command))
		found := false
		for _, c := range s.Command {
			words = append(words, c.Value)
			if kind := workflow.SecretKind(c.Value); kind != "" {
				diags = append(diags, mcpSecret(p, s, c.Pos, kind))
				found = true
			}
		}
		if len(s.Command) > 0 && !found {
			if kind := workflow.SecretKind(strings.Join(words, " ")); kind != "" {
				diags = append(diags, mcpSecret(p, s, s.Command[0].Pos, kind))
			}
		}
	}
	servers := engine.ServersOf(p.Policy)
	for _, w := range flows {
		for _, d := range engine.CheckMCP(w, servers) {
			if !strings.Contains(d.Message, "secret literal") { // reported above, in the profile
				diags = append(diags, d)
			}
		}
	}
	return diags
}

func mcpSecret(p *ir.Profile, s ir.MCPServer, at ir.Pos, kind string) ir.Diagnostic {
	return ir.Diagnostic{File: p.File, Pos: at, Severity: ir.Error,
		Message: fmt.Sprintf("policy.box.mcp.servers.%s.command holds what looks like a secret literal (%s)", s.Name.Value, kind),
		Hint:    fmt.Sprintf("pass it in the server's environment: list the variable in policy.box.mcp.servers.%s.env", s.Name.Value)}
}
