package control

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// Humans makes a GitHub runner see human sessions as the standard requires: a human actor's run
// completes as soon as its engage job has posted the ask, but its session is running until the
// ask is resolved, never done by itself. Get reports a completed run of a human actor running
// while the ask it posted is open; List adds every open ask (an ask posted by a propose job,
// which has no run of its own, has the id "ask:<token>"). Everything else is the inner runner's.
type Humans struct {
	ir.Runner
	// Env reads the asks (its Client, Owner, Repo and Policy's taskStates).
	Env *effect.Env
	// Actors are the fleet's kind: human actors.
	Actors []string
}

// askPrefix starts the id of an ask with no run.
const askPrefix = "ask:"

func (h *Humans) human(agent string) bool { return slices.Contains(h.Actors, agent) }

// Get returns a session, running while a human actor's ask is open.
func (h *Humans) Get(ctx context.Context, id string) (ir.Session, bool, error) {
	if token, ok := strings.CutPrefix(id, askPrefix); ok {
		asks, err := effect.OpenAsks(ctx, h.Env)
		if err != nil {
			return ir.Session{}, false, err
		}
		for _, a := range asks {
			if a.Token == token {
				return askSession(a), true, nil
			}
		}
		return ir.Session{}, false, nil
	}
	s, ok, err := h.Runner.Get(ctx, id)
	if err != nil || !ok || !h.human(s.Agent) || s.Status != ir.Done {
		return s, ok, err
	}
	asks, err := effect.OpenAsks(ctx, h.Env)
	if err != nil {
		return ir.Session{}, false, err
	}
	for _, a := range asks {
		if a.RunID == id {
			s.Status = ir.Running
		}
	}
	return s, true, nil
}

// List returns the inner runner's sessions in flight and every open ask.
func (h *Humans) List(ctx context.Context) ([]ir.Session, error) {
	out, err := h.Runner.List(ctx)
	if err != nil {
		return nil, err
	}
	asks, err := effect.OpenAsks(ctx, h.Env)
	if err != nil {
		return nil, err
	}
	for _, a := range asks {
		s := askSession(a)
		if !slices.ContainsFunc(out, func(o ir.Session) bool { return o.ID == s.ID }) {
			out = append(out, s)
		}
	}
	return out, nil
}

func askSession(a *effect.Ask) ir.Session {
	id := a.RunID
	if id == "" {
		id = askPrefix + a.Token
	}
	return ir.Session{ID: id, Agent: a.Actor, Status: ir.Running, Ref: strconv.Itoa(a.Item)}
}
