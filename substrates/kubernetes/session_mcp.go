package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/internal/mcpserver"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
)

// The MCP server of a skill's session in its pod (`autonomy runner --target kubernetes mcp`,
// which the agent CLI starts): the tools of the actor (internal/tools), each call checked
// against the actor's capabilities as installed in the fleet config (never the workspace), then
// realized here, in the pod:
//
//   - submit_result is written to EnvSubmitted, which the session entry point takes as the
//     session's result (checked against the contract like any result);
//   - launch, update_session, cancel_session and list_sessions go through the Kubernetes runner
//     with the pod's own ServiceAccount: the runner checks the actor's capabilities again, and
//     the API server checks its Role and the fleet's admission policy, so a process that skips
//     this server gets no more;
//   - every other effect (comment, create_item, set_state, ask_person, propose,
//     submit_verdict) and read (read_item, list_items) is refused, saying it is not supported
//     on this target: the cluster holds no code-host or tracker credential.

// podHands is the Backend of that server.
type podHands struct {
	call      *sessionCall
	cfg       *ActorConfig
	submitted string

	// open opens the runner as the actor (nil: with the pod's own ServiceAccount, inClusterRunner).
	open   func(ctx context.Context) (*Runner, error)
	once   sync.Once
	runner *Runner
	err    error
}

// ServeMCP serves the MCP server of the session whose pod's environment is env, on stdio.
func ServeMCP(ctx context.Context, env []string) error {
	c := &sessionCall{env: env}
	var submitted string
	for _, v := range []struct {
		to   *string
		name string
	}{{&c.dir, EnvDir}, {&c.id, EnvSession}, {&c.actor, EnvActor}, {&submitted, EnvSubmitted}} {
		*v.to = sessionenv.Lookup(env, v.name)
		if *v.to == "" {
			return exitcode.Usagef("runner mcp: $%s is not set: this verb is the MCP server a skill's agent CLI starts in a session's pod (docs/kubernetes.md)", v.name)
		}
	}
	cfg, err := c.actorConfig()
	if err != nil {
		return exitcode.Usagef("runner mcp: %v", err)
	}
	h := &podHands{call: c, cfg: cfg, submitted: submitted}
	s := mcpserver.Session{ID: c.id, Actor: cfg.Actor, Grants: grants(cfg.Capabilities)}
	if err := mcpserver.Serve(ctx, s, h); err != nil {
		return exitcode.Usagef("mcp: %v", err)
	}
	return nil
}

// grants are the installed capabilities, each split at its scope.
func grants(caps []string) []tools.Grant {
	out := make([]tools.Grant, 0, len(caps))
	for _, c := range caps {
		name, scope, _ := strings.Cut(c, "@")
		out = append(out, tools.Grant{Name: name, Scope: scope})
	}
	return out
}

// unsupported refuses a tool this target does not realize, saying why.
func unsupported(tool string) error {
	return &tools.Refused{Tool: tool, Reason: "not supported on the kubernetes target: the cluster holds no code-host or work-item credential, so " + tool +
		" has nothing to act on; say what you would have done in your result (submit_result) instead (docs/kubernetes.md, \"What is not supported\")"}
}

// cluster is the runner acting as this session's actor, opened once.
func (h *podHands) cluster(ctx context.Context) (*Runner, error) {
	h.once.Do(func() {
		open := h.open
		if open == nil {
			open = h.inClusterRunner
		}
		h.runner, h.err = open(ctx)
	})
	return h.runner, h.err
}

// inClusterRunner is the runner with the pod's own ServiceAccount, in the pod's namespace.
func (h *podHands) inClusterRunner(ctx context.Context) (*Runner, error) {
	cs, ns, err := Connect{}.Client()
	if err != nil {
		return nil, err
	}
	return OpenRunner(ctx, cs, ns, h.cfg.Actor)
}

// Read answers session_info and list_sessions; read_item and list_items are refused.
func (h *podHands) Read(ctx context.Context, tool string, in tools.Input) (any, error) {
	switch tool {
	case tools.SessionInfo:
		var params map[string]string
		_ = json.Unmarshal([]byte(sessionenv.Lookup(h.call.env, EnvParams)), &params)
		return map[string]any{"session": h.call.id, "actor": h.cfg.Actor, "capabilities": h.cfg.Capabilities,
			"params": params, "ref": sessionenv.Lookup(h.call.env, EnvRef), "substrate": Name}, nil
	case tools.ListSessions:
		r, err := h.cluster(ctx)
		if err != nil {
			return nil, err
		}
		list, err := r.List(ctx)
		if err != nil {
			return nil, err
		}
		q, _ := in.(*tools.SessionQuery)
		out := []map[string]string{}
		for _, s := range list {
			if q == nil || q.Actor == "" || q.Actor == s.Agent {
				out = append(out, map[string]string{"id": s.ID, "actor": s.Agent, "status": string(s.Status)})
			}
		}
		return map[string]any{"sessions": out}, nil
	}
	return nil, unsupported(tool)
}

// Apply realizes a checked effect, or refuses one this target does not realize.
func (h *podHands) Apply(ctx context.Context, e tools.Effect, in tools.Input) (any, error) {
	switch v := in.(type) {
	case *tools.Result:
		if err := os.WriteFile(h.submitted, e.Input, 0o600); err != nil {
			return nil, err
		}
		return map[string]any{"submitted": true, "note": "the session ends with this result once you stop, if it satisfies the actor's result contract"}, nil
	case *tools.LaunchInput:
		r, err := h.cluster(ctx)
		if err != nil {
			return nil, err
		}
		s, err := r.LaunchRef(ctx, v.Actor, v.Subject, ir.LaunchParams(v.Params))
		if err != nil {
			return nil, err
		}
		if isAskID(s.ID) { // an ask: it has no token (never the model's); the operator mints one
			return map[string]any{"session": s.ID, "status": string(s.Status),
				"note": "the ask waits for its person; the operator answers it with a token of their own (autonomy runner --target kubernetes update " + s.ID + " --new-token)"}, nil
		}
		return map[string]any{"session": s.ID, "status": string(s.Status)}, nil
	case *tools.SessionUpdate:
		return h.transition(ctx, v.Session, ir.Patch{Status: ir.SessionStatus(v.Status)})
	case *tools.SessionRef:
		return h.transition(ctx, v.Session, ir.Patch{Status: ir.Cancelled})
	}
	return nil, unsupported(e.Tool)
}

// transition updates or cancels another session through the runner.
func (h *podHands) transition(ctx context.Context, id string, p ir.Patch) (any, error) {
	r, err := h.cluster(ctx)
	if err != nil {
		return nil, err
	}
	var changed bool
	if p.Status == ir.Cancelled {
		changed, err = r.Cancel(ctx, id)
	} else {
		changed, err = r.Update(ctx, id, p)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"session": id, "status": string(p.Status), "changed": changed}, nil
}

// SessionActor is the actor of session id, read from the cluster.
func (h *podHands) SessionActor(ctx context.Context, id string) (string, error) {
	r, err := h.cluster(ctx)
	if err != nil {
		return "", err
	}
	s, ok, err := r.Get(ctx, id)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("no session %s", id)
	}
	return s.Agent, nil
}
