package ghactions

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
)

// events lists every event GitHub Actions can trigger a workflow on, with its activity types
// (nil when GitHub documents none, or when they are free-form as for repository_dispatch). From
// GitHub's "Events that trigger workflows".
var events = map[string][]string{
	"branch_protection_rule":      {"created", "edited", "deleted"},
	"check_run":                   {"created", "rerequested", "completed", "requested_action"},
	"check_suite":                 {"completed"},
	"create":                      nil,
	"delete":                      nil,
	"deployment":                  nil,
	"deployment_status":           nil,
	"discussion":                  {"created", "edited", "deleted", "transferred", "pinned", "unpinned", "labeled", "unlabeled", "locked", "unlocked", "category_changed", "answered", "unanswered"},
	"discussion_comment":          {"created", "edited", "deleted"},
	"fork":                        nil,
	"gollum":                      nil,
	"image_version":               nil,
	"issue_comment":               {"created", "edited", "deleted"},
	"issues":                      {"opened", "edited", "deleted", "transferred", "pinned", "unpinned", "closed", "reopened", "assigned", "unassigned", "labeled", "unlabeled", "locked", "unlocked", "milestoned", "demilestoned", "typed", "untyped"},
	"label":                       {"created", "edited", "deleted"},
	"merge_group":                 {"checks_requested"},
	"milestone":                   {"created", "closed", "opened", "edited", "deleted"},
	"page_build":                  nil,
	"public":                      nil,
	"pull_request":                prTypes,
	"pull_request_review":         {"submitted", "edited", "dismissed"},
	"pull_request_review_comment": {"created", "edited", "deleted"},
	"pull_request_target":         prTypes,
	"push":                        nil,
	"registry_package":            {"published", "updated"},
	"release":                     {"published", "unpublished", "created", "edited", "deleted", "prereleased", "released"},
	"repository_dispatch":         nil,
	"schedule":                    nil,
	"status":                      nil,
	"watch":                       {"started"},
	"workflow_call":               nil,
	"workflow_dispatch":           nil,
	"workflow_run":                {"completed", "requested", "in_progress"},
}

var prTypes = []string{"assigned", "unassigned", "labeled", "unlabeled", "opened", "edited", "closed", "reopened", "synchronize", "converted_to_draft", "locked", "unlocked", "enqueued", "dequeued", "milestoned", "demilestoned", "ready_for_review", "review_requested", "review_request_removed", "auto_merge_enabled", "auto_merge_disabled"}

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
var Roles = []string{"OWNER", "MEMBER", "COLLABORATOR"}

// allRoles are every author_association GitHub reports, for validating policy.box.gh-actions.
var allRoles = []string{"OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "FIRST_TIMER", "MANNEQUIN", "NONE"}

// gate returns the condition under which an event that any outsider can fire may run the agent,
// or "" when the event needs no gate (only people with write access can fire it, or it carries
// nothing an outsider wrote). rolesJSON is a JSON array literal of trusted associations.
func gate(event, rolesJSON string) string {
	trusted := func(field string) string {
		return "contains(fromJSON('" + rolesJSON + "'), github.event." + field + ".author_association)"
	}
	// sameRepo: a pull request whose head branch lives in this repository was pushed by someone
	// with write access.
	const sameRepo = "github.event.pull_request.head.repo.full_name == github.repository"
	switch event {
	case "issue_comment", "discussion_comment", "pull_request_review_comment":
		return trusted("comment")
	case "pull_request_review":
		return trusted("review")
	case "pull_request", "pull_request_target":
		return sameRepo + " || " + trusted("pull_request")
	case "issues":
		// Labeling, assigning or pinning takes triage access; an author opens, edits, closes and
		// reopens their own issue.
		return "!contains(fromJSON('[\"opened\",\"edited\",\"closed\",\"reopened\",\"deleted\"]'), github.event.action) || " + trusted("issue")
	case "discussion":
		// An author creates, edits, deletes and marks answers on their own discussion.
		return "!contains(fromJSON('[\"created\",\"edited\",\"deleted\",\"answered\",\"unanswered\"]'), github.event.action) || " + trusted("discussion")
	case "workflow_run":
		// A run of a pull request from a fork fires workflow_run in this repository.
		return "github.event.workflow_run.head_repository.full_name == github.repository"
	}
	return ""
}

// sourceExpr is the github column of the standard's trigger-param table: the expression that
// resolves source when event fired the workflow. "" resolves to empty.
func sourceExpr(source, event string) string {
	switch source {
	case "subject.ref":
		switch event {
		case "issues", "issue_comment":
			return "github.event.issue.number"
		case "pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment":
			return "github.event.pull_request.number"
		case "discussion", "discussion_comment":
			return "github.event.discussion.number"
		case "schedule":
			return ""
		}
		return "github.event.issue.number || github.event.pull_request.number || github.event.discussion.number"
	case "subject.actor":
		if event == "schedule" {
			return ""
		}
		return "github.event.sender.login || github.actor"
	case "subject.actorRole":
		switch event {
		case "issue_comment", "discussion_comment", "pull_request_review_comment":
			return "github.event.comment.author_association"
		case "pull_request_review":
			return "github.event.review.author_association"
		case "issues":
			return "github.event.issue.author_association"
		case "pull_request", "pull_request_target":
			return "github.event.pull_request.author_association"
		case "discussion":
			return "github.event.discussion.author_association"
		}
		return ""
	case "subject.text":
		switch event {
		case "issue_comment", "discussion_comment", "pull_request_review_comment":
			return "github.event.comment.body"
		case "pull_request_review":
			return "github.event.review.body"
		case "issues":
			return "github.event.issue.body"
		case "pull_request", "pull_request_target":
			return "github.event.pull_request.body"
		case "discussion":
			return "github.event.discussion.body"
		}
		return ""
	case "trigger.kind":
		if event == "schedule" {
			return "github.event_name"
		}
		return "github.event.action || github.event_name"
	}
	return ""
}

// dispatchExpr resolves a source forwarded as the workflow_dispatch input name: the launcher
// sends it. Who dispatched and why are known even when the launcher sent nothing.
func dispatchExpr(source, name string) string {
	in := "inputs." + name
	switch source {
	case "subject.actor":
		return in + " || github.actor"
	case "trigger.kind":
		return in + " || github.event_name"
	}
	return in
}

// configKeys are the keys GitHub accepts in an event's configuration.
var configKeys = []string{"types", "branches", "branches-ignore", "tags", "tags-ignore", "paths", "paths-ignore", "workflows"}

// configIssue is why GitHub would refuse (or silently misread) an event trigger's config: the
// node at fault, what is wrong and how to fix it.
type configIssue struct {
	at   *yaml.Node
	msg  string
	hint string
}

// configProblem returns why GitHub would refuse (or silently misread) an event trigger's config,
// or nil when it is sound. GitHub evaluates no expression under on:, and rejects unknown keys and
// activity types, so such a trigger cannot be carried as written.
func configProblem(event string, config *yaml.Node) *configIssue {
	if config == nil {
		return nil
	}
	if config.Kind != yaml.MappingNode {
		return &configIssue{config, "its config is not a mapping", "write it as { types: [...] } or with branches, paths, tags or workflows"}
	}
	for i := 0; i+1 < len(config.Content); i += 2 {
		k, v := config.Content[i], config.Content[i+1]
		if k.Value == PlainCommentsKey {
			if event != "issue_comment" {
				return &configIssue{k, fmt.Sprintf("%s is a key of issue_comment triggers only", PlainCommentsKey), "remove it"}
			}
			if v.Kind != yaml.ScalarNode || (v.Value != "true" && v.Value != "false") {
				return &configIssue{v, fmt.Sprintf("%s must be true or false", PlainCommentsKey), "write true or false"}
			}
			continue
		}
		if !contains(configKeys, k.Value) {
			hint := fmt.Sprintf("valid: %s, and %s on issue_comment", strings.Join(configKeys, ", "), PlainCommentsKey)
			if ir.Nearest(k.Value, configKeys) != "" {
				hint = ir.Suggest(k.Value, configKeys)
			}
			return &configIssue{k, fmt.Sprintf("GitHub accepts no config key %q", k.Value), hint}
		}
		if issue := configValues(event, k.Value, v); issue != nil {
			return issue
		}
	}
	return nil
}

// configValues checks the values of one config key: a list of strings (or one), holding no
// expression, and for types only the event's activity types.
func configValues(event, key string, v *yaml.Node) *configIssue {
	var items []*yaml.Node
	switch v.Kind {
	case yaml.SequenceNode:
		items = v.Content
	case yaml.ScalarNode:
		items = []*yaml.Node{v}
	default:
		return &configIssue{v, fmt.Sprintf("%s must be a list of strings", key), "write [a, b]"}
	}
	known := events[event]
	for _, it := range items {
		if it.Kind != yaml.ScalarNode {
			return &configIssue{it, fmt.Sprintf("%s must be a list of strings", key), "write [a, b]"}
		}
		if strings.Contains(it.Value, "${{") {
			return &configIssue{it, fmt.Sprintf("%s holds %q, but GitHub evaluates no expression under on:", key, it.Value), "write the literal value; filter at run time in the behavior"}
		}
		if key == "types" && len(known) > 0 && !contains(known, it.Value) {
			hint := "valid: " + strings.Join(known, ", ")
			if ir.Nearest(it.Value, known) != "" {
				hint = ir.Suggest(it.Value, known)
			}
			return &configIssue{it, fmt.Sprintf("GitHub has no %s activity type %q", event, it.Value), hint}
		}
	}
	return nil
}

// ungatable are events anyone can fire that carry no author association to gate on: every
// outsider's star, fork or public wiki edit would run the agent.
var ungatable = []string{"watch", "fork", "gollum"}
