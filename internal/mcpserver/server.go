// Package mcpserver is `autonomy mcp`: the MCP server (the official Go SDK) every agent session
// gets, wired into the pinned CLI by its preset. It lists the tools of package tools that the
// session's actor may use, checks every call (capability, scope, input, cap) before anything
// happens, and hands what passes to a Backend: one that records safe outputs for a trusted job
// (gh-actions), or one that realizes effects through the runner (local). The trusted side checks
// every effect again; this first check only makes a refusal reach the model at once, in words it
// can act on.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autonomyhq/autonomy/internal/tools"
)

// Session is who the server acts for.
type Session struct {
	// ID is the session id, Actor its actor.
	ID, Actor string
	// Grants are the actor's installed capabilities.
	Grants []tools.Grant
	// Max overrides tools.DefaultMax per tool.
	Max map[string]int
}

// Backend answers reads and realizes (or records) checked effects. What it returns is shown to
// the model as the tool's structured result.
type Backend interface {
	// Read answers a read tool: read_item, list_items, session_info, list_sessions.
	Read(ctx context.Context, tool string, in tools.Input) (any, error)
	// Apply realizes or records an effect the server has checked.
	Apply(ctx context.Context, e tools.Effect, in tools.Input) (any, error)
	// SessionActor returns the actor of a session id (for the scope of update and cancel).
	SessionActor(ctx context.Context, id string) (string, error)
}

// Version is the server's implementation version, shown to the CLI.
const Version = "v1"

// New returns the MCP server of one session.
func New(s Session, b Backend) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "autonomy", Version: Version}, &mcp.ServerOptions{
		Instructions: "These tools are how you act on the world: nothing you do in the shell reaches the work items, the runner or the code host. " +
			"A call the actor may not make is refused with the reason.",
	})
	h := &handler{s: s, b: b}
	h.check = &tools.Checker{Actor: s.Actor, Grants: s.Grants, Max: s.Max,
		SessionActor: func(id string) (string, error) { return b.SessionActor(h.ctx, id) }}
	for _, t := range tools.For(s.Grants) {
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Schema()}, h.call(t))
	}
	return srv
}

// Serve runs the server of one session over stdio until the client goes away.
func Serve(ctx context.Context, s Session, b Backend) error {
	return serveOn(ctx, s, b, &mcp.StdioTransport{})
}

// serveOn runs the server of one session on transport t until the client goes away, answering
// the calls it has read before it stops (drainTransport).
func serveOn(ctx context.Context, s Session, b Backend, t mcp.Transport) error {
	err := New(s, b).Run(ctx, drainTransport{t})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

type handler struct {
	s Session
	b Backend

	mu    sync.Mutex // effects are checked, counted and applied one at a time, in order
	check *tools.Checker
	ctx   context.Context // the context of the effect being checked, for SessionActor
}

func (h *handler) call(t tools.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		out, err := h.run(ctx, t, args)
		if err != nil {
			// A refusal or a failure is a tool error the model reads, not a protocol error.
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
		}
		text, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("%s: result: %w", t.Name, err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: out}, nil
	}
}

func (h *handler) run(ctx context.Context, t tools.Tool, args json.RawMessage) (any, error) {
	if !t.Effect {
		in, err := tools.Decode(t, args)
		if err != nil {
			return nil, &tools.Refused{Tool: t.Name, Reason: err.Error()}
		}
		if err := h.readScope(t, in); err != nil {
			return nil, err
		}
		return h.b.Read(ctx, t.Name, in)
	}
	e := tools.Effect{Tool: t.Name, Actor: h.s.Actor, Session: h.s.ID, Input: args}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ctx = ctx
	in, err := h.check.Check(e)
	if err != nil {
		return nil, err
	}
	return h.b.Apply(ctx, e, in)
}

// readScope keeps list_sessions within agent:list's scope.
func (h *handler) readScope(t tools.Tool, in tools.Input) error {
	q, ok := in.(*tools.SessionQuery)
	if !ok || t.Capability == "" {
		return nil
	}
	if q.Actor == "" {
		if h.check.Unscoped(t.Capability) {
			return nil
		}
		return &tools.Refused{Tool: t.Name, Reason: "name the actor: this actor's agent:list is scoped"}
	}
	if !h.check.Allows(t.Capability, q.Actor) {
		return &tools.Refused{Tool: t.Name, Reason: fmt.Sprintf("actor %q may not list %q's sessions (agent:list is scoped)", h.s.Actor, q.Actor)}
	}
	return nil
}
