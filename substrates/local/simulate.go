package local

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/bounded"
	"github.com/autonomyhq/autonomy/internal/handoff"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// The human simulator: the standard's fixture tier of people, for a testbed. A fixtures file
// (YAML) says, per human actor, how its asks are answered: which (by type), with what (approve,
// reject, a decision option, words), after how long on the runner's clock, or never. It is the
// environment's, not the profile's: autonomy runner serve --humans FILE (or tick --humans)
// registers it in the installation's store, where every runner process of the installation
// reads it. An ask engaged while fixtures are registered gets its answer scheduled with its
// redeem token (kept in the store for the simulator alone); the tick that finds it due redeems
// the token through the same resolution a person's goes through, its checks included. A
// "never" leaves the ask open, to be escalated past its SLA like any other.

// MaxFixturesBytes bounds a fixtures file.
const MaxFixturesBytes = 1 << 20

const (
	fixturesKey = "humans.fixtures"
	untyped     = "untyped"
)

func simKey(id string) string { return "asks.sim." + id }

// Rule is how a person answers the asks it matches.
type Rule struct {
	// Type matches the ask's type (approve, decide, consult, inform, or untyped); "" any.
	Type string `json:"type,omitempty"`
	// Choose is the choice: approve, reject (which declines: failed), or a decision option.
	Choose string `json:"choose,omitempty"`
	// Reply is the words handed back (a consult's out).
	Reply string `json:"reply,omitempty"`
	// After is how long after the ask the answer comes, on the runner's clock.
	After time.Duration `json:"after,omitempty"`
	// Never leaves the ask unanswered.
	Never bool `json:"never,omitempty"`
	// At is where the rule is written: FILE:LINE:COL.
	At string `json:"at"`
}

// Fixtures are the simulated people, by actor.
type Fixtures struct {
	Source string            `json:"source"`
	People map[string][]Rule `json:"people"`
}

// ParseFixtures reads a fixtures file, refusing one that is not valid with FILE:LINE:COL and
// the fix. Actors are checked against the installation when registered (SetHumans).
func ParseFixtures(path string) (*Fixtures, error) {
	data, err := bounded.ReadFile(path, MaxFixturesBytes)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	at := func(n *yaml.Node) string { return fmt.Sprintf("%s:%d:%d", path, n.Line, n.Column) }
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:1:1: a fixtures file maps each human actor to a list of rules (maintainer: [{ choose: approve, after: 30m }])", path)
	}
	fx := &Fixtures{Source: path, People: map[string][]Rule{}}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if v.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("%s: %s: a list of rules, each { type, choose, reply, after } or { never: true }", at(v), k.Value)
		}
		for _, rn := range v.Content {
			r, err := parseRule(rn, at)
			if err != nil {
				return nil, err
			}
			fx.People[k.Value] = append(fx.People[k.Value], r)
		}
	}
	return fx, nil
}

func parseRule(n *yaml.Node, at func(*yaml.Node) string) (Rule, error) {
	r := Rule{At: at(n)}
	if n.Kind != yaml.MappingNode {
		return r, fmt.Errorf("%s: a rule is a mapping: { type, choose, reply, after } or { never: true }", at(n))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return r, fmt.Errorf("%s: %s takes one value", at(v), k.Value)
		}
		switch k.Value {
		case "type":
			if !slices.Contains(append(slices.Clone(handoff.Types), untyped), v.Value) {
				return r, fmt.Errorf("%s: type %q: use %s or %s", at(v), v.Value, strings.Join(handoff.Types, ", "), untyped)
			}
			r.Type = v.Value
		case "choose":
			if len(v.Value) > handoff.MaxOption {
				return r, fmt.Errorf("%s: choose is %d bytes; an option is at most %d", at(v), len(v.Value), handoff.MaxOption)
			}
			r.Choose = v.Value
		case "reply":
			if len(v.Value) > handoff.MaxText {
				return r, fmt.Errorf("%s: reply is %d bytes; at most %d", at(v), len(v.Value), handoff.MaxText)
			}
			r.Reply = v.Value
		case "after":
			d, err := time.ParseDuration(v.Value)
			if err != nil || d < 0 {
				return r, fmt.Errorf("%s: after %q is not a duration (30s, 45m, 2h)", at(v), v.Value)
			}
			r.After = d
		case "never":
			if v.Value != "true" {
				return r, fmt.Errorf("%s: never takes true (leave it out otherwise)", at(v))
			}
			r.Never = true
		default:
			return r, fmt.Errorf("%s: unknown key %q: a rule has type, choose, reply, after or never", at(k), k.Value)
		}
	}
	if r.Never && (r.Choose != "" || r.Reply != "" || r.After != 0) {
		return r, fmt.Errorf("%s: a never rule answers nothing: drop choose, reply and after", r.At)
	}
	return r, nil
}

// SetHumans registers fixtures for the installation's asks from now on (nil clears them):
// every actor they name must be a human actor of the installation.
func (r *Runner) SetHumans(ctx context.Context, fx *Fixtures) error {
	if err := r.caller.operatorOnly(ctx, "set the human simulator of"); err != nil {
		return err
	}
	raw := ""
	if fx != nil {
		for name, rules := range fx.People {
			if cfg, err := r.In.Actor(name); err != nil || cfg.Kind != "human" {
				return &RefusedError{Msg: fmt.Sprintf("%s: %q is not a human actor of this installation (its human actors answer asks)", rules[0].At, name)}
			}
		}
		b, err := json.Marshal(fx)
		if err != nil {
			return err
		}
		raw = string(b)
	}
	return r.Store.Tx(ctx, func(tx *store.Tx) error { return tx.SetMeta(fixturesKey, raw) })
}

// simAnswer is an ask's scheduled simulated answer.
type simAnswer struct {
	Token string    `json:"token"`
	Due   time.Time `json:"due"`
	Rule  Rule      `json:"rule"`
}

// scheduleSim schedules the simulated answer of a new ask, in the transaction that inserts it,
// when fixtures are registered.
func scheduleSim(tx *store.Tx, s store.Session, spec *handoff.Spec, token string) error {
	raw, ok, err := tx.Meta(fixturesKey)
	if err != nil || !ok || raw == "" {
		return err
	}
	var fx Fixtures
	if err := json.Unmarshal([]byte(raw), &fx); err != nil {
		return fmt.Errorf("the registered human fixtures: %v", err)
	}
	typ := untyped
	if spec != nil {
		typ = spec.Type
	}
	i := slices.IndexFunc(fx.People[s.Actor], func(r Rule) bool { return r.Type == "" || r.Type == typ })
	if i < 0 {
		return tx.Log(store.Event{Session: s.ID, Actor: s.Actor, Kind: "simulated", Message: fmt.Sprintf("no rule of %s answers a %s ask of %s: it stays open", fx.Source, typ, s.Actor)})
	}
	rule := fx.People[s.Actor][i]
	if rule.Never {
		return tx.Log(store.Event{Session: s.ID, Actor: s.Actor, Kind: "simulated", Message: fmt.Sprintf("%s never answers (%s): it stays open", s.Actor, rule.At)})
	}
	b, err := json.Marshal(simAnswer{Token: token, Due: s.CreatedAt.Add(rule.After), Rule: rule})
	if err != nil {
		return err
	}
	return tx.SetMeta(simKey(s.ID), string(b))
}

// simulate answers the simulated asks that came due by now, as their people would: each through
// the resolution of a redeemed token. It returns the asks it answered.
func (r *Runner) simulate(ctx context.Context, now time.Time) ([]string, error) {
	ss, err := r.Store.List(ctx, store.ListOptions{})
	if err != nil {
		return nil, err
	}
	var answered []string
	for _, s := range ss {
		a, ok, err := r.simAnswer(ctx, s)
		if err != nil || !ok || a.Due.After(now) {
			continue
		}
		if err := r.answerSim(ctx, s, a); err != nil {
			_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "simulate-failed", Message: fmt.Sprintf("%s: %v", a.Rule.At, err)})
		} else {
			answered = append(answered, s.ID)
		}
		if err := r.Store.Tx(ctx, func(tx *store.Tx) error { return tx.SetMeta(simKey(s.ID), "") }); err != nil {
			return answered, err
		}
	}
	return answered, nil
}

func (r *Runner) simAnswer(ctx context.Context, s store.Session) (a simAnswer, ok bool, err error) {
	if s.Kind != "human" || s.Status.Ended() {
		return a, false, nil
	}
	var raw string
	err = r.Store.Tx(ctx, func(tx *store.Tx) (err error) {
		raw, ok, err = tx.Meta(simKey(s.ID))
		return err
	})
	if err != nil || !ok || raw == "" {
		return a, false, err
	}
	return a, true, json.Unmarshal([]byte(raw), &a)
}

// answerSim resolves the ask s as its rule says: reject declines (failed), anything else
// completes it (done); a typed ask gets the choice and the reply, checked against its type.
func (r *Runner) answerSim(ctx context.Context, s store.Session, a simAnswer) error {
	rec, err := readHandoff(ctx, r.Store, s.ID)
	if err != nil {
		return err
	}
	p := ir.Patch{Status: ir.Done, Token: a.Token, Evidence: "answered by the human simulator, " + a.Rule.At}
	if a.Rule.Choose == "reject" && (rec == nil || !slices.Contains(rec.Options(), "reject") || rec.Type == handoff.Approve) {
		p.Status = ir.Failed
	}
	if rec != nil {
		p.Choice, p.Answer = a.Rule.Choose, a.Rule.Reply
	}
	_, err = r.asks.resolveAs(ctx, s, p, "simulator of "+s.Actor+" ("+a.Rule.At+")")
	return err
}

// simulationWake is the sooner of wake and the next simulated answer due.
func (r *Runner) simulationWake(ctx context.Context, wake time.Time) time.Time {
	ss, err := r.Store.List(ctx, store.ListOptions{})
	if err != nil {
		return wake
	}
	for _, s := range ss {
		if a, ok, err := r.simAnswer(ctx, s); err == nil && ok && a.Due.Before(wake) {
			wake = a.Due
		}
	}
	return wake
}
