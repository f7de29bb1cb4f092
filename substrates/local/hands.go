package local

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"

	"github.com/autonomyhq/autonomy/internal/mcpserver"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// Hands is the local realization of the agent's tools (package tools): the Backend of the MCP
// server a preset's session gets (autonomy runner mcp, which its CLI starts outside its sandbox).
// It acts as the calling session, through the runner's own verbs and their checks: a launch,
// update or cancel is authorized against the actor's installed capabilities and scopes and
// counted against its cap in the store, exactly as the session's autonomy runner launch is.
// What the local runner keeps no tracker for (work items) is refused in words the model reads.
type Hands struct {
	r *Runner
}

// Hands returns the tools' backend of the runner's calling session, and the server's session.
// The operator has no tools: the runner must be opened as a session.
func (r *Runner) Hands() (*Hands, mcpserver.Session, error) {
	if r.caller == nil {
		return nil, mcpserver.Session{}, &RefusedError{Msg: fmt.Sprintf("the tools are a session's: run autonomy runner mcp from a session's agent (%s set)", SessionEnv)}
	}
	cfg, err := r.In.Actor(r.caller.session.Actor)
	if err != nil {
		return nil, mcpserver.Session{}, err
	}
	s := mcpserver.Session{ID: r.caller.session.ID, Actor: r.caller.session.Actor,
		Grants: tools.Grants(substrates.ParseCapabilities(cfg.Capabilities)), Max: cfg.ToolsMax}
	return &Hands{r: r}, s, nil
}

// noTracker refuses a tool on work items: the local runner keeps none.
func noTracker(tool string) error {
	return &tools.Refused{Tool: tool, Reason: "the local runner keeps no work items (no tracker on this substrate): " +
		"say what you found in your result (submit_result), or ask a person (ask_person)"}
}

// SessionActor returns the actor of session id.
func (h *Hands) SessionActor(ctx context.Context, id string) (string, error) {
	s, ok, err := h.r.Store.Get(ctx, id)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("no session %s", id)
	}
	return s.Actor, nil
}

// ToolSession is a session as the tools show it.
type ToolSession struct {
	ID     string `json:"id"`
	Actor  string `json:"actor"`
	Status string `json:"status"`
	Ref    string `json:"ref,omitempty"`
	// Branch is the branch a launch asked its session to work on (the shim's --branch), when
	// it runs there.
	Branch string `json:"branch,omitempty"`
}

// Read answers the read tools.
func (h *Hands) Read(ctx context.Context, tool string, in tools.Input) (any, error) {
	c := h.r.caller
	switch tool {
	case tools.SessionInfo:
		cfg, err := h.r.In.Actor(c.session.Actor)
		if err != nil {
			return nil, err
		}
		return map[string]any{"session": c.session.ID, "actor": c.session.Actor, "capabilities": cfg.Capabilities,
			"params": c.session.Params, "ref": c.session.Ref, "branch": c.session.Branch, "substrate": Name}, nil
	case tools.ListSessions:
		list, err := h.r.List(ctx, false)
		if err != nil {
			return nil, err
		}
		q, _ := in.(*tools.SessionQuery)
		out := []ToolSession{}
		for _, s := range list {
			if q == nil || q.Actor == "" || q.Actor == s.Actor {
				out = append(out, ToolSession{ID: s.ID, Actor: s.Actor, Status: string(s.Status), Ref: s.Ref})
			}
		}
		return map[string]any{"sessions": out}, nil
	case tools.ReadItem, tools.ListItems:
		if h.r.onGitHub() {
			return h.readViaRunner(ctx, tool, in)
		}
		return nil, noItems(tool)
	}
	return nil, noTracker(tool)
}

// noItems refuses a read of the work items for codeHost local-git, which has none to read.
func noItems(tool string) error {
	return &tools.Refused{Tool: tool, Reason: "this fleet's codeHost is local-git, which has no issue tracker: there are no work items to read or list. " +
		"Your subject is in session_info (ref, params) and the code is in your workspace; say what you found in your result (submit_result), " +
		"or ask a person (ask_person). A fleet whose items are GitHub issues installs with codeHost: github"}
}

// launch realizes a launch tool call, on branch when one is asked for (the shim's --branch; "" for
// none) and its actor works in the shared workspace: an isolated actor's worktree is on the branch
// the runner names (autonomy/<actor>/<session>), whatever a launcher asks.
func (h *Hands) launch(ctx context.Context, v *tools.LaunchInput, branch string) (any, error) {
	r := h.r
	req := LaunchRequest{Actor: v.Actor, Params: v.Params, Ref: v.Subject}
	if cfg, err := r.In.Actor(v.Actor); err == nil {
		if cfg.Kind == "human" {
			// An ask of a person (hello-human's approver): the model reads its id, never its
			// redeem token, which the runner keeps for the person, as ask_person's (it was lost).
			req.keepToken = r.keepToken
		} else if cfg.Workspace != "isolated" {
			req.Branch = branch
		}
	}
	res, err := r.Launch(ctx, req)
	if err != nil {
		return nil, err
	}
	return ToolSession{ID: res.Session.ID, Actor: res.Session.Actor, Status: string(res.Session.Status), Ref: res.Session.Ref, Branch: res.Session.Branch}, nil
}

// Apply realizes one effect the server checked, as the session, checked again by the runner.
func (h *Hands) Apply(ctx context.Context, e tools.Effect, in tools.Input) (any, error) {
	r := h.r
	switch v := in.(type) {
	case *tools.LaunchInput:
		return h.launch(ctx, v, "")
	case *tools.SessionUpdate:
		s, err := r.Update(ctx, v.Session, ir.Patch{Status: ir.SessionStatus(v.Status)})
		if err != nil {
			return nil, err
		}
		return ToolSession{ID: s.ID, Actor: s.Actor, Status: string(s.Status), Ref: s.Ref}, nil
	case *tools.SessionRef:
		changed, err := r.Cancel(ctx, v.Session)
		if err != nil {
			return nil, err
		}
		return map[string]any{"session": v.Session, "cancelled": changed}, nil
	case *tools.CommentInput, *tools.NewItem, *tools.StateChange:
		if r.onGitHub() {
			return h.viaRunner(ctx, e.Tool, in)
		}
		if _, ok := v.(*tools.CommentInput); ok {
			return h.record(ctx, e.Tool, in)
		}
		return nil, noTracker(e.Tool)
	case *tools.Proposal:
		return h.propose(ctx, e.Tool, h.proposal(ctx, v))
	case *tools.Ask:
		return h.ask(ctx, v)
	}
	return h.record(ctx, e.Tool, in)
}

// Recorded is what the model reads of an effect the runner recorded for its session.
type Recorded struct {
	Recorded bool   `json:"recorded"`
	Note     string `json:"note"`
}

// record keeps the effect with the session, as the event that spends its cap: its message is
// the effect's input, JSON (docs/tools.md, "On the local runner").
func (h *Hands) record(ctx context.Context, tool string, what any) (any, error) {
	raw, err := json.Marshal(what)
	if err != nil {
		return nil, err
	}
	if err := h.r.caller.spend(ctx, tool, string(raw)); err != nil {
		return nil, err
	}
	return Recorded{Recorded: true, Note: "recorded with session " + h.r.caller.session.ID + ": the operator reads it in autonomy runner get " + h.r.caller.session.ID}, nil
}

// propose spends the propose cap (the tool:propose event) and records the proposal of the
// calling session in the code flow (store.AddProposal) with the title and body the agent gave:
// the session's end completes it with its branch, head and target, and the flow then checks,
// reviews and merges it (codeflow.go). A second call before the end replaces the title and body.
func (h *Hands) propose(ctx context.Context, tool string, rec ProposalRecord) (any, error) {
	s := h.r.caller.session
	cfg, err := h.r.In.Actor(s.Actor)
	if err != nil {
		return nil, err
	}
	if _, err := h.record(ctx, tool, rec); err != nil {
		return nil, err
	}
	title := or(strings.TrimSpace(rec.Title), "(untitled)")
	p, created, err := h.r.Store.AddProposal(ctx, store.Proposal{Session: s.ID, Actor: s.Actor, Title: title, Body: rec.Body})
	if err != nil {
		return nil, err
	}
	if !created {
		p, _, err = h.r.Store.MoveProposal(ctx, p.Seq, []store.ProposalState{store.ProposalProposed}, func(m *store.Proposal) {
			m.Title, m.Body = title, rec.Body
		})
		if err != nil {
			return nil, err
		}
	}
	return Recorded{Recorded: true, Note: fmt.Sprintf("proposal %d recorded (state %s): when this session ends done, the runner proposes the commits on its branch "+
		"(now %s at %s), launches its reviewer (%s) on that head and merges an approval. Commit your work before you end.", p.Seq, p.State, or(rec.Branch, "(none)"), or(short(rec.Head), "(none)"), or(cfg.Reviewer, "none declared: it will be refused"))}, nil
}

// ProposalRecord is the propose effect as the local runner keeps it: the commit proposed and
// the branch it is on, read from the session's workspace when the call is made, with the title
// and body the agent gave. The local code flow reads it (the tool:propose event's message).
type ProposalRecord struct {
	Branch string `json:"branch,omitempty"`
	Head   string `json:"head,omitempty"`
	Title  string `json:"title"`
	Body   string `json:"body,omitempty"`
	Item   string `json:"item,omitempty"`
}

func (h *Hands) proposal(ctx context.Context, v *tools.Proposal) ProposalRecord {
	s := h.r.caller.session
	dir := s.Workdir
	if dir == "" {
		dir = h.r.In.Dir
	}
	git := func(args ...string) string {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	return ProposalRecord{Branch: git("symbolic-ref", "--short", "-q", "HEAD"), Head: git("rev-parse", "-q", "--verify", "HEAD"),
		Title: v.Title, Body: tools.Neutralize(v.Body), Item: v.Item}
}
