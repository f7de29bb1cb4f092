// Package tools is the agent's hands: the one tool surface every agent session gets, whatever
// the substrate. A tool's name, input and description are stable (docs/tools.md); which tools a
// session gets is derived from its actor's capabilities and nothing else (For); and every write a
// tool asks for is an Effect, a typed line that the trusted side checks against the actor's
// installed capabilities, scopes and caps (Check) before it realizes it: a trusted job on
// GitHub, the runner locally. The model never holds the authority an effect needs; it asks.
package tools

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/autonomyhq/autonomy/ir"
)

// Tool is one tool of the surface.
type Tool struct {
	// Name is the tool's stable name, as the MCP server lists it.
	Name string
	// Description is what the model reads about it.
	Description string
	// Capability is the capability an actor must hold for the tool ("" for every agent).
	Capability string
	// Effect is true for a tool that changes the world: its calls become Effects, checked and
	// realized by the trusted side. A read only reads.
	Effect bool
	// input is the zero value of the tool's input, whose JSON shape is the input schema.
	input func() Input
}

// Input is a tool's decoded input; Check validates it.
type Input interface {
	// validate reports what is wrong with the input, for the model to read and fix.
	validate() error
}

// NewInput returns an empty input of the tool's type, to decode a call into.
func (t Tool) NewInput() Input { return t.input() }

// The tool names. They are part of the contract with skills and never change meaning.
const (
	ReadItem      = "read_item"
	ListItems     = "list_items"
	SessionInfo   = "session_info"
	SubmitResult  = "submit_result"
	AskPerson     = "ask_person"
	Comment       = "comment"
	CreateItem    = "create_item"
	SetState      = "set_state"
	Launch        = "launch"
	ListSessions  = "list_sessions"
	UpdateSession = "update_session"
	CancelSession = "cancel_session"
	Propose       = "propose"
	SubmitVerdict = "submit_verdict"
)

// Catalog is every tool, in the order a session lists them.
var Catalog = []Tool{
	{Name: ReadItem, Description: "Read a work item (issue or pull request): title, body, state, labels and comments.",
		input: func() Input { return &ItemRef{} }},
	{Name: ListItems, Description: "List the work items in a lifecycle state (open, ready, working, in-review, input-required, blocked, done, rejected).",
		input: func() Input { return &StateQuery{} }},
	{Name: SessionInfo, Description: "Read this session: the actor, its capabilities, its params and the policy it runs under.",
		input: func() Input { return &Empty{} }},
	{Name: SubmitResult, Description: "Submit this session's result: a status, a summary and what was done. A session is done only with a result.",
		Effect: true, input: func() Input { return &Result{} }},
	{Name: AskPerson, Description: "Ask a person, typed: approve (approve or reject), decide (one of your options), consult (an answer in words), or tell them something (inform, which never waits); hand over what they need (in) and say what to hand back (out).",
		Effect: true, input: func() Input { return &Ask{} }},
	{Name: Comment, Capability: "tasks:converse", Description: "Post a comment on a work item.",
		Effect: true, input: func() Input { return &CommentInput{} }},
	{Name: CreateItem, Capability: "tasks:author", Description: "Create a work item with a title, a body and labels.",
		Effect: true, input: func() Input { return &NewItem{} }},
	{Name: SetState, Capability: "tasks:author", Description: "Move a work item to a lifecycle state.",
		Effect: true, input: func() Input { return &StateChange{} }},
	{Name: Launch, Capability: "agent:launch", Description: "Launch another actor of this fleet, with params, on a subject.",
		Effect: true, input: func() Input { return &LaunchInput{} }},
	{Name: ListSessions, Capability: "agent:list", Description: "List the sessions in flight (running or paused), optionally of one actor.",
		input: func() Input { return &SessionQuery{} }},
	{Name: UpdateSession, Capability: "agent:update", Description: "Pause, resume or retry another actor's session.",
		Effect: true, input: func() Input { return &SessionUpdate{} }},
	{Name: CancelSession, Capability: "agent:cancel", Description: "Stop another actor's session.",
		Effect: true, input: func() Input { return &SessionRef{} }},
	{Name: Propose, Capability: "code:propose", Description: "Propose the workspace's commits as a change for review: the substrate makes the branch and the pull request.",
		Effect: true, input: func() Input { return &Proposal{} }},
	{Name: SubmitVerdict, Capability: "code:review", Description: "Submit the review verdict on a proposed change, bound to the head commit you reviewed.",
		Effect: true, input: func() Input { return &Verdict{} }},
}

// Lookup returns the tool of that name.
func Lookup(name string) (Tool, bool) {
	i := slices.IndexFunc(Catalog, func(t Tool) bool { return t.Name == name })
	if i < 0 {
		return Tool{}, false
	}
	return Catalog[i], true
}

// Grant is one capability an actor holds, with its scope ("" when unscoped).
type Grant struct {
	Name  string `json:"name"`
	Scope string `json:"scope,omitempty"`
}

// Grants converts an actor's declared capabilities.
func Grants(caps []ir.Capability) []Grant {
	out := make([]Grant, 0, len(caps))
	for _, c := range caps {
		out = append(out, Grant{Name: c.Name, Scope: c.Scope})
	}
	return out
}

// For lists the tools an actor holding grants gets, in catalog order: every tool that needs no
// capability, and each tool whose capability it holds (in any scope; Check enforces the scope).
func For(grants []Grant) []Tool {
	var out []Tool
	for _, t := range Catalog {
		if t.Capability == "" || slices.ContainsFunc(grants, func(g Grant) bool { return g.Name == t.Capability }) {
			out = append(out, t)
		}
	}
	return out
}

// Schema is the JSON Schema of a tool's input, generated from its Go type.
func (t Tool) Schema() json.RawMessage {
	s, err := schemaOf(t.input())
	if err != nil {
		panic(fmt.Sprintf("tools: schema of %s: %v", t.Name, err)) // the catalog is static: a test runs every one
	}
	return s
}
