// Package steps reads markdown step playbooks (seed 002, with the PLAYBOOK.md v0.1.0 conventions
// for inputs, directives, branches and artifacts): a # title, an optional ## SYSTEM prompt and
// ## INPUTS, numbered ## STEP N: sections run in order with their outputs accumulated, and an
// optional ## ARTIFACTS type.
//
// Parse keeps the line and column of every element and reports the seed's fatal errors (empty, no
// title, no step, a duplicate input, over 200,000 bytes) as errors; Validate reports the seed's
// warnings. A playbook with any error must not be run.
package steps

import (
	"github.com/autonomyhq/autonomy/ir"
)

// MaxSize is the largest step playbook in bytes (the seed's 200 KB).
const MaxSize = 200_000

// Playbook is a parsed step playbook.
type Playbook struct {
	File        string
	Title       ir.String
	Description string
	// System is the system prompt applied to every step (the last ## SYSTEM wins).
	System ir.String
	// InputsPos is where ## INPUTS is; zero when absent.
	InputsPos ir.Pos
	Inputs    []*Input
	Steps     []*Step
	// Artifact is the declared output type; nil without ## ARTIFACTS.
	Artifact *ir.String
}

// Input types, canonical names (aliases map onto them; an unknown type is a string).
const (
	String  = "string"
	Text    = "text"
	Number  = "number"
	Boolean = "boolean"
	Enum    = "enum"
)

// Input is one declared input variable.
type Input struct {
	Name ir.String
	// Type is the canonical type; TypeAs is the type as written.
	Type, TypeAs string
	// Default is the default value; Required is true when there is none (enums never have one).
	Default  string
	Required bool
	Options  []string
	// Description is the text after the closing parenthesis.
	Description string
}

// Step is a ## STEP N: section, or a ### STEP Na: sub-step inside a branch.
type Step struct {
	// Number is N; Label is "N" for a step and "Na" for a sub-step.
	Number int
	Label  string
	Title  ir.String
	Pos    ir.Pos
	// Prompt is the step's text with directives and branch markers taken out, trimmed.
	Prompt string
	Output *Output
	Elicit *Elicit
	// PromptRef is the @prompt directive's argument.
	PromptRef *ir.String
	Tool      *Tool
	Branches  []*Branch
}

// Output is an @output(var[: type][, extract:"field"]) directive: the step's final message (or
// the field extract names of the JSON object it is) captured as var, checked against its type.
type Output struct {
	Var     ir.String
	Extract string
	// Type is one of OutputTypes ("string" when none is written); TypePos is where it is written.
	Type    string
	TypePos ir.Pos
	// Options are an enum's values: @output(verdict: enum(approve, reject)).
	Options []string
}

// OutputTypes are the types an @output may declare.
var OutputTypes = []string{String, Text, Number, Boolean, "json", Enum}

// YesNo reads a confirm's answer: yes, y or true; no, n or false (any case, surrounding space
// ignored). ok is false for anything else.
func YesNo(s string) (yes, ok bool) { return ir.YesNo(s) }

// Elicitation types.
const (
	ElicitInput   = "input"
	ElicitConfirm = "confirm"
	ElicitSelect  = "select"
)

// Elicit is an @elicit(type, "prompt", "option"...) directive.
type Elicit struct {
	Pos     ir.Pos
	Type    string
	Prompt  string
	Options []string
}

// Tool is an @tool(connection, tool[, {json}]) directive.
type Tool struct {
	Pos        ir.Pos
	Connection string
	Name       string
	// Args is the JSON arguments as written (may hold {{var}} placeholders); "" when absent.
	Args string
}

// Branch is one arm of an ```if``` … ```endif``` block: if, elif or else.
type Branch struct {
	Pos  ir.Pos
	Kind string
	// Var, Op ("==" or "!=") and Value are the condition; empty for else.
	Var   ir.String
	Op    string
	Value string
	// Prompt is the arm's text outside sub-steps; Steps are its ### STEP Na: sub-steps.
	Prompt string
	Steps  []*Step
}

// ArtifactTypes are the recognized ## ARTIFACTS types.
var ArtifactTypes = []string{"markdown", "json", "mermaid", "chartjs", "html_css", "javascript", "typescript"}
