package local

import (
	"context"
	"fmt"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/substrates"
)

// caller is the session a verb is called from; nil is the operator, who may do everything.
type caller struct {
	session store.Session
	substrates.Caller
	// store records the verbs refused to it.
	store *store.Store
	// max overrides tools.DefaultMax per tool (policy.box.local.tools.max).
	max map[string]int
}

// identify loads the calling session: it must exist and be in flight, or the caller is refused
// (an ended session's leftovers must not act, and a forged id grants nothing).
func identify(st *store.Store, in *Install, id string) (*caller, error) {
	s, ok, err := st.Get(context.Background(), id)
	if err != nil {
		return nil, err
	}
	if !ok || s.Status.Ended() {
		state := "unknown"
		if ok {
			state = string(s.Status)
		}
		return nil, &DeniedError{Msg: fmt.Sprintf("%s=%s names no session in flight (%s): a runner call from inside a session acts only while that session runs", SessionEnv, id, state)}
	}
	cfg, err := in.Actor(s.Actor)
	if err != nil {
		return nil, err
	}
	c := &caller{session: s, store: st, max: cfg.ToolsMax}
	c.Caller = substrates.Caller{Who: c.describe(), Caps: substrates.ParseCapabilities(cfg.Capabilities)}
	return c, nil
}

// describe names the caller in messages and records.
func (c *caller) describe() string {
	if c == nil {
		return "the operator"
	}
	return fmt.Sprintf("session %s (actor %q)", c.session.ID, c.session.Actor)
}

// origin is what a launch records as its origin.
func (c *caller) origin() string {
	if c == nil {
		return "operator"
	}
	return "session:" + c.session.ID
}

// authorize checks that the caller may apply verb (launch, list, update, cancel) to actor ("" for
// any actor: list), as substrates.Caller decides on every substrate. The operator may do
// everything.
func (c *caller) authorize(ctx context.Context, verb, actor string) error {
	if c == nil {
		return nil
	}
	if msg := c.Authorize(verb, actor); msg != "" {
		return c.deny(ctx, msg)
	}
	if tool := verbTools[verb]; tool != "" && actor != "" {
		return c.spend(ctx, tool, verb+" "+actor)
	}
	return nil
}

// operatorOnly refuses verb to a session: the trigger executor is the operator's.
func (c *caller) operatorOnly(ctx context.Context, verb string) error {
	if c == nil {
		return nil
	}
	return c.deny(ctx, fmt.Sprintf("%s may not %s: the trigger executor is the operator's, never a session's", c.describe(), verb))
}

// deny records msg, a verb refused to the caller, and returns it as a *DeniedError.
func (c *caller) deny(ctx context.Context, msg string) error {
	_ = c.store.Log(ctx, store.Event{Session: c.session.ID, Actor: c.session.Actor, Kind: "denied", Message: msg})
	return &DeniedError{Msg: msg}
}

// listScope is the only actor a scoped agent:list lets the caller see ("" for all).
func (c *caller) listScope() string {
	if c == nil {
		return ""
	}
	return c.ListScope()
}
