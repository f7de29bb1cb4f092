package local

import (
	"fmt"
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/internal/ghevent"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// Firing an event: which actors it fires, by which trigger, with what params, recorded in the
// caller's transaction and then started. The event source (events.go) and the code flow's hook
// (code_events.go) both fire through it.

// eventNames are the events a pull request's activity fires: both pull_request and
// pull_request_target; any other event is itself.
func eventNames(name string) []string {
	if name == "pull_request" {
		return []string{"pull_request", "pull_request_target"}
	}
	return []string{name}
}

// firing is one actor an event fires, by which of its triggers, with what subject.text.
type firing struct {
	cfg     *ActorConfig
	trigger int
	text    string
}

// firings are the actors ev fires, in the installation's order; when none, why (for the
// report) when some actor declares the event.
func (es *EventSource) firings(ev ghEvent) ([]firing, string) {
	var out []firing
	why := ""
	roles := es.r.In.Runner.Events.TrustedRoles
	for _, name := range es.r.In.Runner.Actors {
		cfg, err := es.r.In.Actor(name)
		if err != nil || cfg.Kind == "human" {
			continue // a person's event triggers are not fired locally (docs/local.md)
		}
		i, text, ok := 0, "", false
		for _, event := range eventNames(ev.Name) {
			e := ev
			e.Name = event
			if i, text, ok = matchTrigger(cfg, e); ok {
				break
			}
		}
		if !ok {
			continue
		}
		switch {
		case ev.Bot:
			why = "a bot's events fire nothing, as GitHub fires no workflow on its token's"
		case !ghevent.Trusted(ev.Name, ev.Action, ev.Role, ev.SameRepo, roles):
			why = fmt.Sprintf("its author's association %s is not trusted (%s)", ev.Role, strings.Join(roles, ", "))
		default:
			out = append(out, firing{cfg: cfg, trigger: i, text: text})
		}
	}
	return out, why
}

// matchTrigger finds the trigger of cfg that ev fires, and the subject.text it gives: the rest of
// an "/agent <actor>" command, or the whole text. An issue_comment fires an actor only when it
// addresses it with /agent <actor>, unless its trigger sets plain_comments: then any comment but
// a command fires it (ghactions control.go).
func matchTrigger(cfg *ActorConfig, ev ghEvent) (int, string, bool) {
	plain := slices.ContainsFunc(cfg.Triggers, func(t Trigger) bool { return t.Event == "issue_comment" && t.PlainComments })
	for i, t := range cfg.Triggers {
		if t.Kind != string(ir.Event) || t.Event != ev.Name || (len(t.Types) > 0 && !slices.Contains(t.Types, ev.Action)) {
			continue
		}
		if ev.Name != "issue_comment" {
			return i, ev.Body, true
		}
		switch {
		case plain && !ghevent.Addressed(ev.Body, ""):
			return i, ev.Body, true
		case !plain && !slices.Contains(ghevent.ControlVerbs, cfg.Actor) && ghevent.Addressed(ev.Body, cfg.Actor):
			return i, ghevent.CommandText(ev.Body, cfg.Actor), true
		}
		return 0, "", false
	}
	return 0, "", false
}

// recordEvent inserts, in tx, the session ev fires for f: its params resolved as the workflow's
// would be (subject.actorRole is the author's association). where names the event's subject
// for the audit log.
func (r *Runner) recordEvent(tx *store.Tx, f firing, ev ghEvent, where string) (store.Session, error) {
	t := &f.cfg.Triggers[f.trigger]
	params, err := r.resolve(f.cfg, t, LaunchRequest{Ref: ev.Ref, From: ev.Login, Text: f.text, Kind: ev.Action})
	if err != nil {
		return store.Session{}, err
	}
	for _, p := range f.cfg.Params {
		if p.Source == "subject.actorRole" && slices.Contains(t.Params, p.Name) {
			params[p.Name] = ev.Role
		}
	}
	s := store.Session{Actor: f.cfg.Actor, Kind: f.cfg.Kind, Ref: ev.Ref, Params: params, Trigger: t.Event, Origin: "event"}
	if err := r.insert(tx, f.cfg, &s); err != nil {
		return s, err
	}
	return s, tx.Log(store.Event{Session: s.ID, Actor: s.Actor, Kind: "event", Message: fmt.Sprintf("fired by %s %s of %s (%s) %s", t.Event, ev.Action, ev.Login, ev.Role, where)})
}

// preflightFirings refuses, before anything is recorded, an actor whose agent is not installed.
func (r *Runner) preflightFirings(firings []firing) error {
	for _, f := range firings {
		if err := r.In.preflight(r.opts.Env, f.cfg); err != nil {
			return err
		}
		if err := r.In.verifyBehavior(f.cfg); err != nil {
			return &RefusedError{Msg: err.Error()}
		}
	}
	return nil
}

// heldFirings is, inside tx, why the firings of ev are dropped ("" when they may fire): the
// fleet's pause or the pause of the work item ev is on (held). As on GitHub, where
// AUTONOMY_PAUSED skips the jobs an event starts, an event that comes while paused is not kept
// for the resume: it is marked handled and its drop logged.
func heldFirings(tx *store.Tx, firings []firing, ev ghEvent, where string) (string, error) {
	if len(firings) == 0 {
		return "", nil
	}
	reason, err := held(tx, ev.Ref)
	if err != nil || reason == "" {
		return "", err
	}
	var actors []string
	for _, f := range firings {
		actors = append(actors, f.cfg.Actor)
	}
	return reason, tx.Log(store.Event{Kind: "refused", Message: fmt.Sprintf("%s %s of %s %s would fire %s, dropped: %s",
		ev.Name, ev.Action, ev.Login, where, strings.Join(actors, ", "), reason)})
}

// recordFirings records, in tx, the session of each firing of ev; where names the event's
// subject for the audit log. When an actor cannot start now (at capacity) it records nothing
// and says why: the caller rolls back.
func (r *Runner) recordFirings(tx *store.Tx, firings []firing, ev ghEvent, where string) ([]store.Session, string, error) {
	var fired []store.Session
	active := -1
	for _, f := range firings {
		ok, reason, err := r.admit(tx, f.cfg.Actor, false, &active)
		if err != nil || !ok {
			return nil, reason, err
		}
		s, err := r.recordEvent(tx, f, ev, where)
		if err != nil {
			return nil, "", err
		}
		if active >= 0 {
			active++
		}
		fired = append(fired, s)
	}
	return fired, "", nil
}
