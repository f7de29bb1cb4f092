package ghactions

import (
	"sort"
	"strings"

	"github.com/autonomyhq/autonomy/internal/ghevent"

	"github.com/rhysd/actionlint"
)

// events lists every event GitHub Actions can trigger a workflow on, with its activity types:
// empty when GitHub documents none, nil when they are free-form (repository_dispatch). It is
// actionlint's table, generated from GitHub's "Events that trigger workflows".
var events = actionlint.AllWebhookTypes

// eventNames lists the known events, sorted, for suggestions.
func eventNames() []string {
	out := make([]string, 0, len(events))
	for e := range events {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

// Roles are the author_association values trusted by default on events any outsider can fire.
var Roles = ghevent.TrustedRoles

// allRoles are every author_association GitHub reports, for validating policy.box.gh-actions.
var allRoles = ghevent.AllRoles

// gate returns the condition under which an event that any outsider can fire may run the agent,
// or "" when the event needs no gate (only people with write access can fire it, or it carries
// nothing an outsider wrote): ghevent.Trusted as an expression. rolesJSON is a JSON array
// literal of trusted associations.
func gate(event, rolesJSON string) string {
	switch event {
	case "workflow_run":
		// A run of a pull request from a fork fires workflow_run in this repository.
		return "github.event.workflow_run.head_repository.full_name == github.repository"
	}
	author := ghevent.AuthorObject(event)
	if author == "" {
		return ""
	}
	g := "contains(fromJSON('" + rolesJSON + "'), github.event." + author + ".author_association)"
	if event == "pull_request" || event == "pull_request_target" {
		// sameRepo: a pull request whose head branch lives in this repository was pushed by
		// someone with write access.
		g = "github.event.pull_request.head.repo.full_name == github.repository || " + g
	}
	if self := ghevent.AuthorActions(event); self != nil {
		g = "!contains(fromJSON('[\"" + strings.Join(self, "\",\"") + "\"]'), github.event.action) || " + g
	}
	return g
}

// sourceExpr is the github column of the standard's trigger-param table: the expression that
// resolves source when event fired the workflow. "" resolves to empty.
func sourceExpr(source, event string) string {
	author, subject := ghevent.AuthorObject(event), ghevent.SubjectObject(event)
	switch source {
	case "subject.ref":
		if event == "schedule" {
			return ""
		}
		if subject != "" {
			return "github.event." + subject + ".number"
		}
		return "github.event.issue.number || github.event.pull_request.number || github.event.discussion.number"
	case "subject.actor":
		if event == "schedule" {
			return ""
		}
		return "github.event.sender.login || github.actor"
	case "subject.actorRole":
		if author == "" {
			return ""
		}
		return "github.event." + author + ".author_association"
	case "subject.text":
		if author == "" {
			return ""
		}
		return "github.event." + author + ".body"
	case "trigger.kind":
		if event == "schedule" {
			return "github.event_name"
		}
		return "github.event.action || github.event_name"
	}
	return ""
}

// dispatchBot is who a dispatch made with a workflow's GITHUB_TOKEN comes from: the apply job of
// an actor launching another (effect.applyLaunch), which sets the subject.actor input to the
// launching actor and refuses the agent's own value for it, but also any other job of the
// repository holding actions: write (every workflow without a permissions: block under a write
// default, which autonomy provision narrows to read). The run cannot tell them apart, so the
// input is trusted only as far as those workflows are (docs/gh-actions.md, "Bot-dispatched
// launches"); the role stays NONE either way.
const dispatchBot = "github-actions[bot]"

// dispatchExpr resolves a source forwarded as the workflow_dispatch input name: the launcher
// sends it. Why is known even when the launcher sent nothing. Who dispatched and their role gate
// privileged commands, so the trusted side sets them whatever the dispatcher sent: the actor is
// github.actor (the launching actor's name when our apply job dispatched, as the bot); the role
// is NONE for a bot (a session launched it, as locally), else OWNER for the repository's owner and
// COLLABORATOR for anyone else, who needs write access to dispatch at all (an expression cannot
// see organization membership, so a member reads COLLABORATOR: trusted by default either way).
func dispatchExpr(source, name string) string {
	in := "inputs." + name
	switch source {
	case "subject.actor":
		return "github.actor == '" + dispatchBot + "' && " + in + " || github.actor"
	case "subject.actorRole":
		return "endsWith(github.actor, '[bot]') && 'NONE' || github.actor == github.repository_owner && 'OWNER' || 'COLLABORATOR'"
	case "trigger.kind":
		return in + " || github.event_name"
	}
	return in
}

// ungatable are events anyone can fire that carry no author association to gate on: every
// outsider's star, fork or public wiki edit would run the agent.
var ungatable = []string{"watch", "fork", "gollum"}
