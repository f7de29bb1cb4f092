package local

import (
	"context"
	"errors"
	"fmt"

	"github.com/autonomyhq/autonomy/internal/store"
)

// The events of codeHost local-git: no GitHub to poll, so the runner's own code flow (the
// counterpart of the trusted propose and review jobs) fires them through FireCodeEvent when a
// proposal is opened or updated and when a verdict lands on it, for the actors whose event
// triggers declare the GitHub events they stand for.

// CodeEventKind is what happened in the runner's code flow.
type CodeEventKind string

// The code flow's events, and the GitHub events (with their activity) they stand for.
const (
	// ProposalOpened is a new proposal: pull_request and pull_request_target, opened.
	ProposalOpened CodeEventKind = "opened"
	// ProposalUpdated is a new head on a proposal: pull_request and pull_request_target,
	// synchronize.
	ProposalUpdated CodeEventKind = "synchronize"
	// VerdictSubmitted is a reviewer's verdict on a proposal's head: pull_request_review,
	// submitted.
	VerdictSubmitted CodeEventKind = "submitted"
)

// CodeEvent is one event of the runner's code flow.
type CodeEvent struct {
	Kind CodeEventKind
	// Proposal is the proposal's id (its subject.ref).
	Proposal string
	// Head is the commit the event is about: the proposal's head, the head a verdict binds to.
	// With Kind and Proposal it makes the event's identity: one event fires once.
	Head string
	// By is the actor that proposed or gave the verdict (subject.actor); Text the proposal's
	// description or the verdict's body (subject.text).
	By, Text string
	// Reviewing is the actor the code flow launched to review this head, on the proposal's
	// branch: its own pull_request trigger does not fire it again, in the installation root
	// (newc9: every proposal of sdlc was reviewed twice). "" for none.
	Reviewing string
}

// githubEvents are the events a code event stands for.
func (k CodeEventKind) githubEvents() []string {
	if k == VerdictSubmitted {
		return []string{"pull_request_review"}
	}
	return []string{"pull_request", "pull_request_target"}
}

// FireCodeEvent fires the actors whose event triggers declare what ev stands for, with the
// params a workflow on GitHub would resolve (subject.ref the proposal, subject.actor who acted,
// subject.actorRole NONE: a session acted, subject.text the text, trigger.kind the activity).
// The code flow is the runner's own, so no author gate applies. Each event fires once however
// often it is handed in: its key is recorded in the same transaction as the sessions. It
// returns the sessions started; an actor at capacity refuses the whole event (nothing fired,
// nothing recorded), for the flow to hand it in again.
func (r *Runner) FireCodeEvent(ctx context.Context, ev CodeEvent) ([]store.Session, error) {
	if ev.Proposal == "" || ev.Head == "" || ev.By == "" {
		return nil, errors.New("a code event names its proposal, head and actor")
	}
	if ev.Kind != ProposalOpened && ev.Kind != ProposalUpdated && ev.Kind != VerdictSubmitted {
		return nil, fmt.Errorf("unknown code event %q", ev.Kind)
	}
	firings, gev := r.codeFirings(ev)
	if len(firings) == 0 {
		return nil, nil
	}
	if err := r.preflightFirings(firings); err != nil {
		return nil, err
	}
	key := fmt.Sprintf("events.local.%s.%s.%s", ev.Kind, ev.Proposal, ev.Head)
	var fired []store.Session
	err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		fired = nil
		if _, seen, err := tx.Meta(key); err != nil || seen {
			return err
		}
		where := "on proposal " + ev.Proposal + " at " + ev.Head
		if paused, err := heldFirings(tx, firings, gev, where); err != nil || paused != "" {
			if err == nil {
				err = tx.SetMeta(key, r.opts.Now().UTC().Format("2006-01-02T15:04:05Z"))
			}
			return err
		}
		var refused string
		var err error
		if fired, refused, err = r.recordFirings(tx, firings, gev, where); err != nil {
			return err
		}
		if refused != "" {
			return &RefusedError{Msg: fmt.Sprintf("%s of proposal %s not fired: %s", ev.Kind, ev.Proposal, refused)}
		}
		return tx.SetMeta(key, r.opts.Now().UTC().Format("2006-01-02T15:04:05Z"))
	})
	if err != nil {
		return nil, err
	}
	return r.startFired(ctx, fired)
}

// codeFirings are the actors ev fires, and the GitHub event it stands for.
func (r *Runner) codeFirings(ev CodeEvent) ([]firing, ghEvent) {
	var firings []firing
	var gev ghEvent
	for _, name := range r.In.Runner.Actors {
		cfg, err := r.In.Actor(name)
		if err != nil || cfg.Kind == "human" || name == ev.Reviewing && ev.Kind != VerdictSubmitted {
			continue
		}
		for _, event := range ev.Kind.githubEvents() {
			e := ghEvent{Name: event, Action: string(ev.Kind), Ref: ev.Proposal, Login: ev.By, Role: "NONE", Body: ev.Text, SameRepo: true}
			if i, text, ok := matchTrigger(cfg, e); ok {
				firings, gev = append(firings, firing{cfg: cfg, trigger: i, text: text}), e
				break
			}
		}
	}
	return firings, gev
}

// fireOpened fires the code event of the proposal now in review: opened, or synchronize when an
// earlier proposal had the same branch (a new head on it, as a push to a pull request's branch).
// The proposal's identity (subject.ref) is its branch, as a pull request's head branch.
func (f *flow) fireOpened(ctx context.Context) {
	kind := ProposalOpened
	if all, err := f.r.Store.Proposals(ctx, true, 0); err == nil {
		for _, o := range all {
			if o.Seq < f.p.Seq && o.Branch == f.p.Branch {
				kind = ProposalUpdated
				break
			}
		}
	}
	ev := CodeEvent{Kind: kind, Proposal: f.p.Branch, Head: f.p.Head, By: f.p.Actor, Text: f.p.Title}
	if cfg, err := f.r.In.Actor(f.p.Actor); err == nil {
		ev.Reviewing = cfg.Reviewer
	}
	f.fire(ctx, ev)
}

// fireVerdict fires the code event of a verdict by actor on head.
func (f *flow) fireVerdict(ctx context.Context, actor, verdict, head string) {
	f.fire(ctx, CodeEvent{Kind: VerdictSubmitted, Proposal: f.p.Branch, Head: or(head, f.p.Head), By: actor, Text: verdict})
}

// fire hands ev to FireCodeEvent; what it could not fire (an actor at capacity, one not
// installed) is logged with the proposer's session, never holding the flow back.
func (f *flow) fire(ctx context.Context, ev CodeEvent) {
	if _, err := f.r.FireCodeEvent(ctx, ev); err != nil {
		_ = f.r.Store.Log(ctx, store.Event{Session: f.p.Session, Actor: f.p.Actor, Kind: "event-failed",
			Message: fmt.Sprintf("proposal %d: %s on %s at %s not fired: %v", f.p.Seq, ev.Kind, ev.Proposal, short(ev.Head), err)})
	}
}
