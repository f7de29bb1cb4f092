// Package workflow reads workflow playbooks (seed 003): YAML or JSON files declaring a name, args
// and steps whose commands carry an explicit namespace (cli, http, web, mcp, node), pass data by
// $step.stdout and $step.json, and pause at approval gates.
//
// Parse reads the shape (keys, types) keeping every position; Validate checks names, unique step
// ids, namespaces, references to earlier steps, conditions, and that no secret value is written
// in the spec (secrets come only by handle, $secrets.NAME).
package workflow

import (
	"strings"

	"github.com/autonomyhq/autonomy/ir"
)

// MaxSize is the largest workflow file read (1 MiB): a workflow is a few kilobytes.
const MaxSize = 1 << 20

// Namespaces are the command namespaces of the seed, in the order messages list them.
var Namespaces = []string{"cli", "http", "web", "mcp", "node"}

// Fields a step reference may read: $id.stdout, $id.json (optionally .path), $id.approved.
const (
	FieldStdout   = "stdout"
	FieldJSON     = "json"
	FieldApproved = "approved"
)

// Reserved prefixes of references that are not step ids: $secrets.NAME is a secret handle and
// $args.NAME an argument.
const (
	SecretsRef = "secrets"
	ArgsRef    = "args"
)

// Workflow is a parsed workflow playbook.
type Workflow struct {
	File        string
	Name        ir.String
	Description ir.String
	Args        []*Arg
	// StepsPos is where steps: is; zero when absent.
	StepsPos ir.Pos
	Steps    []*Step
	// lines are the file's lines, to place a diagnostic inside a value.
	lines []string
}

// Arg is one declared argument.
type Arg struct {
	Name        ir.String
	Default     *ir.String
	Description ir.String
}

// Step is one step of the workflow.
type Step struct {
	Pos     ir.Pos
	ID      ir.String
	Command ir.String
	// Namespace is the command's first word and Rest what follows it.
	Namespace   string
	Rest        string
	Description ir.String
	// Output is "json" or "text" (empty: text).
	Output ir.String
	Stdin  ir.String
	// Approval is "required" for an approval gate.
	Approval ir.String
	// Prompt is the question an approval gate asks.
	Prompt    ir.String
	Condition ir.String
	Cwd       ir.String
	Env       []EnvVar
	TimeoutMs ir.Int
	// Schema is the step's explicit output schema, an inline JSON Schema as JSON values (nil:
	// none); a step with one prints JSON that must satisfy it. SchemaPos is where schema: is.
	Schema    any
	SchemaPos ir.Pos
	// Postcondition is a cli or http command run once the step succeeded, in its cwd with its
	// env and limits; its failure fails the step (seed 003: "postconditions for state-changing
	// steps"). It may read the step's own output.
	Postcondition ir.String
}

// PostconditionStep is the step's postcondition as a step of its own (same id, cwd, env and
// timeout), nil when it has none.
func (s *Step) PostconditionStep() *Step {
	if s.Postcondition.Value == "" {
		return nil
	}
	pc := &Step{Pos: s.Postcondition.Pos, ID: s.ID, Command: s.Postcondition, Cwd: s.Cwd, Env: s.Env, TimeoutMs: s.TimeoutMs}
	pc.Namespace, pc.Rest, _ = strings.Cut(strings.TrimSpace(s.Postcondition.Value), " ")
	pc.Rest = strings.TrimSpace(pc.Rest)
	return pc
}

// EnvVar is one environment variable of a step.
type EnvVar struct {
	Name, Value ir.String
}

// IsApproval reports whether the step is an approval gate.
func (s *Step) IsApproval() bool { return s.Approval.Value == "required" }

// Ref is a reference such as $collect.stdout found in a value.
type Ref struct {
	Pos ir.Pos
	// Name is the step id (or secrets, args), Field what follows the dot, Path the rest of a
	// $id.json.a.b reference ("a.b").
	Name, Field, Path string
	// Text is the reference as written.
	Text string
}

// RefPattern is the regexp matching a reference in a value, compiled on first use: group 1 is
// the name, group 2 the field and group 3 the path after it (with its leading dot). The runtime
// substitutes what it matches.
var RefPattern = refPattern
