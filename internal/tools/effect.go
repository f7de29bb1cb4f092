package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/internal/strictjson"
)

// Effect is one write a session asked for: a typed line of its safe outputs. The server that
// records it sets Actor and Session; the trusted side never trusts them alone and checks the
// effect against the actor's installed capabilities again before it realizes it.
type Effect struct {
	Tool    string          `json:"tool"`
	Actor   string          `json:"actor"`
	Session string          `json:"session,omitempty"`
	Input   json.RawMessage `json:"input"`
}

// Refused is a checked effect the trusted side will not realize; its reason is written for the
// model to read and act on.
type Refused struct {
	Tool, Reason string
}

func (r *Refused) Error() string { return "refused: " + r.Tool + ": " + r.Reason }

// DefaultMax caps how many effects of each tool one session may have realized; a profile
// overrides them per tool (policy.box.<target>.tools.max).
var DefaultMax = map[string]int{
	SubmitResult: 1, AskPerson: 3, Comment: 10, CreateItem: 5, SetState: 10,
	Launch: 5, UpdateSession: 10, CancelSession: 10, Propose: 1, SubmitVerdict: 1,
}

// Checker checks one session's effects in order, against its actor's grants and the caps.
type Checker struct {
	// Actor and Grants are the session's actor and its installed capabilities, read from the
	// installation the trusted side trusts (never from the model's workspace).
	Actor  string
	Grants []Grant
	// Max overrides DefaultMax per tool.
	Max map[string]int
	// SessionActor resolves the actor of a session id, to check agent:update and agent:cancel
	// against their scope; nil refuses scoped update and cancel.
	SessionActor func(id string) (string, error)

	count map[string]int
}

// Check decodes and checks one effect. It returns the decoded input of an effect the trusted
// side may realize (and counts it against the cap), or a *Refused.
func (c *Checker) Check(e Effect) (Input, error) {
	t, ok := Lookup(e.Tool)
	if !ok || !t.Effect {
		return nil, &Refused{Tool: e.Tool, Reason: "not a tool that changes anything; the tools are " + strings.Join(effectNames(), ", ")}
	}
	if e.Actor != c.Actor {
		return nil, &Refused{Tool: e.Tool, Reason: fmt.Sprintf("the effect names actor %q, but this session's actor is %q", e.Actor, c.Actor)}
	}
	if t.Capability != "" && !c.holds(t.Capability) {
		return nil, &Refused{Tool: e.Tool, Reason: fmt.Sprintf("it needs the capability %s, which actor %q does not hold", t.Capability, c.Actor)}
	}
	in, err := Decode(t, e.Input)
	if err != nil {
		return nil, &Refused{Tool: e.Tool, Reason: err.Error()}
	}
	// The cap before the scope: a capped-out call costs no lookup of a session's actor.
	max, ok := c.Max[t.Name]
	if !ok {
		max = DefaultMax[t.Name]
	}
	if c.count == nil {
		c.count = map[string]int{}
	}
	if c.count[t.Name] >= max {
		return nil, &Refused{Tool: e.Tool, Reason: fmt.Sprintf("this session already used its %d %s call(s) (the cap in policy.box.<target>.tools.max)", max, t.Name)}
	}
	if err := c.scope(t, in); err != nil {
		return nil, &Refused{Tool: e.Tool, Reason: err.Error()}
	}
	c.count[t.Name]++
	return in, nil
}

// Decode reads a tool's input strictly: one JSON object, no unknown field, no key written twice
// or differing from another only in case, then validated.
func Decode(t Tool, raw json.RawMessage) (Input, error) {
	in := t.NewInput()
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		return nil, fmt.Errorf("input: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("input: more than one JSON value")
	}
	if err := strictjson.Check(raw); err != nil { // a repeated or case-twin key: which one counts?
		return nil, fmt.Errorf("input: %v", err)
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	return in, nil
}

func (c *Checker) holds(capability string) bool {
	return slices.ContainsFunc(c.Grants, func(g Grant) bool { return g.Name == capability })
}

// Allows reports whether the actor's grants of capability cover target (an actor name): an
// unscoped grant covers every actor, a scoped one the actors its scope matches.
func (c *Checker) Allows(capability, target string) bool {
	for _, g := range c.Grants {
		if g.Name != capability {
			continue
		}
		if g.Scope == "" {
			return true
		}
		if ok, _ := path.Match(g.Scope, target); ok {
			return true
		}
	}
	return false
}

// scope checks the agent verbs' targets against their grants' scopes.
func (c *Checker) scope(t Tool, in Input) error {
	var target string
	switch v := in.(type) {
	case *LaunchInput:
		target = v.Actor
	case *SessionUpdate, *SessionRef:
		id := sessionOf(v)
		if c.SessionActor == nil {
			if c.Unscoped(t.Capability) {
				return nil
			}
			return fmt.Errorf("the session's actor cannot be checked against the scope of %s here", t.Capability)
		}
		actor, err := c.SessionActor(id)
		if err != nil {
			return fmt.Errorf("session %s: %v", id, err)
		}
		target = actor
	default:
		return nil
	}
	if !c.Allows(t.Capability, target) {
		return fmt.Errorf("actor %q may not act on %q: its %s is scoped to %s", c.Actor, target, t.Capability, c.scopes(t.Capability))
	}
	return nil
}

// Unscoped reports whether a grant of capability covers every actor.
func (c *Checker) Unscoped(capability string) bool {
	return slices.ContainsFunc(c.Grants, func(g Grant) bool { return g.Name == capability && (g.Scope == "" || g.Scope == "*") })
}

func sessionOf(in Input) string {
	if u, ok := in.(*SessionUpdate); ok {
		return u.Session
	}
	return in.(*SessionRef).Session
}

func (c *Checker) scopes(capability string) string {
	var s []string
	for _, g := range c.Grants {
		if g.Name == capability {
			s = append(s, g.Scope)
		}
	}
	return strings.Join(s, ", ")
}

func effectNames() []string {
	var out []string
	for _, t := range Catalog {
		if t.Effect {
			out = append(out, t.Name)
		}
	}
	return out
}
