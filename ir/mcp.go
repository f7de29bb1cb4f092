package ir

import (
	"regexp"
	"sync"

	"gopkg.in/yaml.v3"
)

// MCPServer is one server of policy.box.mcp.servers: a stdio MCP server the mcp steps of
// workflow playbooks may call by name.
type MCPServer struct {
	Name String
	// Command is the server's argv, exec'd directly (never through a shell).
	Command []String
	// Env names the environment variables the server receives (resolved like secret handles);
	// it gets nothing else of the runner's environment but PATH and the locale.
	Env []String
	// TimeoutMs caps each call to it (0: the step's timeout).
	TimeoutMs Int
}

// serverNameRe is a server name: the word an mcp step names it by.
var serverNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`) })

var mcpKeys = []string{"servers"}
var mcpServerKeys = []string{"command", "env", "timeoutMs"}

const mcpExample = "e.g. mcp: { servers: { search: { command: [search-mcp, --stdio], env: [SEARCH_TOKEN], timeoutMs: 10000 } } }"

// boxMCP type-checks policy.box.mcp: { servers: { NAME: { command, env, timeoutMs } } }.
func (d decoder) boxMCP(p *Policy, v *yaml.Node) {
	if !d.mapping(v, "policy.box.mcp", mcpExample) {
		return
	}
	d.fields(v, "policy.box.mcp", mcpKeys, func(_ string, _, servers *yaml.Node) {
		if isNull(servers) || !d.mapping(servers, "policy.box.mcp.servers", mcpExample) {
			return
		}
		for i := 0; i+1 < len(servers.Content); i += 2 {
			k, sv := servers.Content[i], servers.Content[i+1]
			what := "policy.box.mcp.servers." + k.Value
			if !serverNameRe().MatchString(k.Value) {
				d.r.errorf(pos(k), "a server name is letters, digits, _, . and -", "%s: %q is not a server name", what, k.Value)
				continue
			}
			if !d.mapping(sv, what, mcpExample) {
				continue
			}
			s := MCPServer{Name: String{k.Value, pos(k)}}
			d.fields(sv, what, mcpServerKeys, func(key string, _, fv *yaml.Node) {
				switch key {
				case "command":
					s.Command = d.strList(fv, what+".command", "e.g. command: [search-mcp, --stdio]", "give the server's argv, e.g. command: [search-mcp, --stdio]")
				case "env":
					s.Env = d.strList(fv, what+".env", "e.g. env: [SEARCH_TOKEN]", "")
					for _, e := range s.Env {
						if !varNameRe().MatchString(e.Value) {
							d.r.errorf(e.Pos, "an environment variable name, e.g. SEARCH_TOKEN", "%s.env: %q is not an environment variable name", what, e.Value)
						}
					}
				case "timeoutMs":
					if s.TimeoutMs = d.integer(fv, what+".timeoutMs", "milliseconds", "e.g. timeoutMs: 10000", "give at most 2147483647"); s.TimeoutMs.Pos.IsSet() && s.TimeoutMs.Value < 1 {
						d.r.errorf(s.TimeoutMs.Pos, "give 1 or more, or remove it", "%s.timeoutMs %d must be at least 1", what, s.TimeoutMs.Value)
					}
				}
			})
			if s.Command == nil && !hasKey(sv, "command") {
				d.r.errorf(pos(k), "give the server's argv, e.g. command: [search-mcp, --stdio]", "%s has no command", what)
			}
			p.MCP = append(p.MCP, s)
		}
	})
}

func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// MCPServerNamed returns the declared server name, or nil.
func (p *Policy) MCPServerNamed(name string) *MCPServer {
	for i := range p.MCP {
		if p.MCP[i].Name.Value == name {
			return &p.MCP[i]
		}
	}
	return nil
}

// MCPServerNames lists the declared servers, in declaration order, for messages.
func (p *Policy) MCPServerNames() []string {
	out := make([]string, 0, len(p.MCP))
	for _, s := range p.MCP {
		out = append(out, s.Name.Value)
	}
	return out
}

// mcpSchema is policy.box.mcp in the JSON Schema of the profile.
func mcpSchema(positive any) map[string]any {
	server := map[string]any{"type": "object", "additionalProperties": false, "required": []string{"command"}, "properties": map[string]any{
		"command":   map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"type": "string", "minLength": 1}},
		"env":       map[string]any{"type": "array", "items": map[string]any{"type": "string", "pattern": varNameRe().String()}},
		"timeoutMs": positive,
	}}
	return map[string]any{"type": []string{"object", "null"}, "additionalProperties": false, "properties": map[string]any{
		"servers": map[string]any{"type": []string{"object", "null"}, "propertyNames": map[string]any{"pattern": serverNameRe().String()}, "additionalProperties": server},
	}}
}
