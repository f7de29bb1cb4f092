package local

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/internal/tools"
)

// AskDir holds the redeem tokens of the asks sessions made with the ask_person tool: no
// launcher holds them (the model never sees one), so the runner keeps each, readable by the
// installation's owner only, for the person it asks.
const AskDir = StateDir + "/asks"

// AskPlaced is what the model reads of its ask_person: the ask and how it is resolved.
type AskPlaced struct {
	Ask    string `json:"ask"`
	Person string `json:"person"`
	Type   string `json:"type"`
	Note   string `json:"note"`
}

// ask realizes ask_person: a typed ask of the person (a human actor), launched as the runner's
// own act for the session (no agent:launch needed), counted against the tool's cap. The redeem
// token goes to the person's channel (TokenFile), never to the model. An inform never parks
// the session, and no ask does: the session goes on, and reads the answer with runner get.
func (h *Hands) ask(ctx context.Context, v *tools.Ask) (any, error) {
	r := h.r
	person, err := r.person(v.Person)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if err := r.caller.spend(ctx, tools.AskPerson, string(raw)); err != nil {
		return nil, err
	}
	spec := v.Spec()
	res, err := r.launchAs(ctx, LaunchRequest{Actor: person, Ref: v.Item, Text: v.Question, From: r.caller.session.Actor, Handoff: &spec, forAgent: true, keepToken: r.keepToken}, r.caller.origin())
	if err != nil {
		return nil, err
	}
	note := "asked " + person + ": " + res.Session.ID + " is open until they resolve it; autonomy runner get " + res.Session.ID + " (or list_sessions) shows it and what came back"
	if spec.Type == "inform" {
		note = "told " + person + " (" + res.Session.ID + "): an inform never waits; go on"
	}
	return AskPlaced{Ask: res.Session.ID, Person: person, Type: spec.Type, Note: note}, nil
}

// person is the human actor an ask goes to: the one named, or the fleet's only one.
func (r *Runner) person(name string) (string, error) {
	if name != "" {
		cfg, err := r.In.Actor(name)
		if err != nil || cfg.Kind != "human" {
			return "", &tools.Refused{Tool: tools.AskPerson, Reason: fmt.Sprintf("person %q is not a human actor of this fleet", name)}
		}
		return name, nil
	}
	var people []string
	for _, a := range r.In.Runner.Actors {
		if cfg, err := r.In.Actor(a); err == nil && cfg.Kind == "human" && !cfg.archived() {
			people = append(people, a)
		}
	}
	if len(people) != 1 {
		return "", &tools.Refused{Tool: tools.AskPerson, Reason: fmt.Sprintf("this fleet has %d human actors %v: name the one to ask (person)", len(people), people)}
	}
	return people[0], nil
}

// TokenFile is where the runner keeps the redeem token of an ask no launcher holds.
func (in *Install) TokenFile(id string) string { return in.Path(AskDir + "/" + id + ".token") }

// keepToken writes an ask's token, for its owner only, and tells the engage backend.
func (r *Runner) keepToken(s store.Session, token string) error {
	path := r.In.TokenFile(s.ID)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return fmt.Errorf("keeping the token of ask %s: %v", s.ID, err)
	}
	return nil
}
