package resolved

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
)

// WorkflowPlaybook is a workflow playbook (seed 003) as a substrate compiles it: its steps in order,
// each with the spec `autonomy playbook step` runs it from.
type WorkflowPlaybook struct {
	// File is the playbook's path, for diagnostics positioned in it.
	File  string
	Steps []*WorkflowStep
}

// WorkflowStep is one step of a workflow playbook.
type WorkflowStep struct {
	// Spec is the step as `autonomy playbook step` reads it. Its Argv is nil when the command's
	// words cannot be split (WordsError says why).
	Spec StepSpec
	// WordsError is why the step's command cannot be split into words; "" when it can.
	WordsError string
	// Pos is the step's position in File, CommandPos its command's.
	Pos, CommandPos ir.Pos
	// Prompt is an approval step's prompt ("" when it has none, or is no approval).
	Prompt string
}

// StepSpec is one workflow step as `autonomy playbook step` reads it (JSON, in the step's
// environment): what it runs, with what, and the context a reference needs.
type StepSpec struct {
	ID        string      `json:"id"`
	Namespace string      `json:"namespace"`
	Argv      []string    `json:"argv"`
	Stdin     string      `json:"stdin,omitempty"`
	Condition string      `json:"condition,omitempty"`
	Output    string      `json:"output,omitempty"`
	Cwd       string      `json:"cwd,omitempty"`
	Env       [][2]string `json:"env,omitempty"`
	TimeoutMs int         `json:"timeoutMs,omitempty"`
	// Approval says the step is an approval gate: reaching it means a reviewer approved it
	// (the job is gated by its environment), so $id.approved is true.
	Approval bool `json:"approval,omitempty"`
	// Args are the workflow's declared args with their defaults (nil: no default); an
	// environment variable of the same name, when set, overrides the default.
	Args map[string]*string `json:"args,omitempty"`
	// Steps are the workflow's step ids, so that a reference to a step not run reads empty.
	Steps []string `json:"steps"`
	// Secrets are the secret handles ($secrets.NAME) the step reads, each from the environment
	// variable NAME; their values are redacted from the record.
	Secrets []string `json:"secrets,omitempty"`
	// MaxOutputBytes caps the step's output (default DefaultMaxOutputBytes).
	MaxOutputBytes int `json:"maxOutputBytes,omitempty"`
	// Schema is the step's explicit output schema (JSON Schema), absent when none.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Postcondition is the command run once the step succeeded, absent when none.
	Postcondition *Command `json:"postcondition,omitempty"`
	// CLI is policy.box.cli, which the step's program (and its postcondition's) must pass.
	CLI *CLIPolicy `json:"cli,omitempty"`
	// Web is policy.box.web, the hosts a web step may fetch from.
	Web *WebPolicy `json:"web,omitempty"`
}

// Command is a cli or http command split into its words at compile time.
type Command struct {
	Namespace string   `json:"namespace"`
	Argv      []string `json:"argv"`
}

// SchemaValue is the step's schema as JSON values (nil: none); a schema that is not JSON is an
// error, never no schema.
func (s StepSpec) SchemaValue() (any, error) {
	if len(s.Schema) == 0 {
		return nil, nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(s.Schema))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || v == nil {
		return nil, fmt.Errorf("the step's schema is not a JSON Schema: %v", err)
	}
	return v, nil
}

// MCPServer is a server an mcp step may call (policy.box.mcp.servers.NAME).
type MCPServer struct {
	// Command is the server's argv, exec'd directly.
	Command []string `json:"command"`
	// Env names the environment variables the server receives, resolved as secret handles are.
	Env []string `json:"env,omitempty"`
	// TimeoutMs caps a call to the server (the step's timeout when lower or unset).
	TimeoutMs int `json:"timeoutMs,omitempty"`
}

// ServersOf is policy.box.mcp.servers as MCPServers, by name; nil when none is declared.
func ServersOf(p ir.Policy) map[string]MCPServer {
	if len(p.MCP) == 0 {
		return nil
	}
	out := make(map[string]MCPServer, len(p.MCP))
	for _, s := range p.MCP {
		srv := MCPServer{TimeoutMs: s.TimeoutMs.Value}
		for _, c := range s.Command {
			srv.Command = append(srv.Command, c.Value)
		}
		for _, e := range s.Env {
			srv.Env = append(srv.Env, e.Value)
		}
		out[s.Name.Value] = srv
	}
	return out
}

// CLIPolicy is policy.box.cli as the runtimes read it: Allow (empty: any program) and Deny, by
// program name.
type CLIPolicy struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// CLIOf is policy.box.cli as a CLIPolicy; nil when the profile sets none.
func CLIOf(p ir.Policy) *CLIPolicy {
	if p.CLI == nil || len(p.CLI.Allow) == 0 && len(p.CLI.Deny) == 0 {
		return nil
	}
	c := &CLIPolicy{}
	for _, a := range p.CLI.Allow {
		c.Allow = append(c.Allow, a.Value)
	}
	for _, d := range p.CLI.Deny {
		c.Deny = append(c.Deny, d.Value)
	}
	return c
}

// Refuses says why program (a cli command's first word: a name, or a path whose last element is
// matched) may not run under c, and the fix; why is "" when it may (always under a nil policy).
func (c *CLIPolicy) Refuses(program string) (why, fix string) {
	if c == nil {
		return "", ""
	}
	name := path.Base(strings.ReplaceAll(program, `\`, "/"))
	if slices.Contains(c.Deny, name) {
		return fmt.Sprintf("the program %q is denied by policy.box.cli.deny", name), "remove it from policy.box.cli.deny, or change the step"
	}
	if len(c.Allow) > 0 && !slices.Contains(c.Allow, name) {
		return fmt.Sprintf("the program %q is not in policy.box.cli.allow [%s]", name, strings.Join(c.Allow, ", ")), "add it to policy.box.cli.allow, or change the step"
	}
	return "", ""
}

// WebPolicy is policy.box.web as the runtimes read it: the hosts web steps may fetch from.
type WebPolicy struct {
	Allow []string `json:"allow"`
}

// WebOf is policy.box.web as a WebPolicy; nil when the profile sets none (no web step runs).
func WebOf(p ir.Policy) *WebPolicy {
	if p.Web == nil || len(p.Web.Allow) == 0 {
		return nil
	}
	w := &WebPolicy{}
	for _, a := range p.Web.Allow {
		w.Allow = append(w.Allow, a.Value)
	}
	return w
}

// Refuses says why a web step may not fetch from host, and the fix; why is "" when it may.
func (w *WebPolicy) Refuses(host string) (why, fix string) {
	if w == nil {
		return "web steps are off: no host is listed in policy.box.web.allow", "list the hosts web steps may fetch from in policy.box.web.allow (--web-allow for playbook run), or use an http step"
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	for _, a := range w.Allow {
		a = strings.ToLower(a)
		if h == a || strings.HasPrefix(a, "*.") && strings.HasSuffix(h, a[1:]) {
			return "", ""
		}
	}
	return fmt.Sprintf("the host %q is not in policy.box.web.allow [%s]", host, strings.Join(w.Allow, ", ")), "add it to policy.box.web.allow, or fetch another URL"
}
