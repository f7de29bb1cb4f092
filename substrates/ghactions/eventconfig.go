package ghactions

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
)

// configKeys are the keys GitHub accepts in an event's configuration, each on some events only
// (keyAvailable).
var configKeys = []string{"types", "branches", "branches-ignore", "tags", "tags-ignore", "paths", "paths-ignore", "workflows", "names", "versions"}

// filterEvents are the events a filter of an event's config is available on (its -ignore form
// too): the lists actionlint checks in its events rule, which exports no table of them. types is
// available on the events that have activity types (events).
var filterEvents = map[string][]string{
	"branches":  {"merge_group", "push", "pull_request", "pull_request_target", "workflow_run"},
	"tags":      {"push"},
	"paths":     {"push", "pull_request", "pull_request_target"},
	"workflows": {"workflow_run"},
	"names":     {"image_version"},
	"versions":  {"image_version"},
}

// exclusiveFilters are the filters GitHub refuses beside their -ignore form on one event.
var exclusiveFilters = []string{"branches", "tags", "paths"}

// keyAvailable reports whether GitHub (or autonomy, for plain_comments) accepts key in the config
// of event.
func keyAvailable(event, key string) bool {
	switch key {
	case PlainCommentsKey:
		return event == "issue_comment"
	case "types":
		types, ok := events[event]
		return ok && (types == nil || len(types) > 0)
	}
	return slices.Contains(filterEvents[strings.TrimSuffix(key, "-ignore")], event)
}

// validKeys lists the config keys event accepts, in configKeys order.
func validKeys(event string) []string {
	var out []string
	for _, k := range slices.Concat(configKeys, []string{PlainCommentsKey}) {
		if keyAvailable(event, k) {
			out = append(out, k)
		}
	}
	return out
}

// keysHint lists the config keys event accepts, or says it takes none.
func keysHint(event string) string {
	keys := validKeys(event)
	if len(keys) == 0 {
		return event + " takes no config: remove it"
	}
	return "valid keys for " + event + ": " + strings.Join(keys, ", ")
}

// configIssue is why GitHub would refuse (or silently misread) an event trigger's config: the
// node at fault (nil: the trigger's event), what is wrong and how to fix it.
type configIssue struct {
	at   *yaml.Node
	msg  string
	hint string
}

// configProblem returns why GitHub would refuse (or silently misread) an event trigger's config,
// or nil when it is sound. GitHub evaluates no expression under on:, and rejects unknown keys, keys
// the event does not take and activity types it does not have, so such a trigger cannot be
// carried as written.
func configProblem(event string, config *yaml.Node) *configIssue {
	if config == nil {
		if event == "workflow_run" {
			return &configIssue{nil, "it names no workflows, and GitHub fires workflow_run only for the workflows named", "add config: { workflows: [NAME] }"}
		}
		return nil
	}
	if config.Kind != yaml.MappingNode {
		return &configIssue{config, "its config is not a mapping", "write it as { KEY: [...] }; " + keysHint(event)}
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(config.Content); i += 2 {
		k, v := config.Content[i], config.Content[i+1]
		if issue := configKey(event, k); issue != nil {
			return issue
		}
		seen[k.Value] = k
		if k.Value == PlainCommentsKey {
			if v.Kind != yaml.ScalarNode || (v.Value != "true" && v.Value != "false") {
				return &configIssue{v, fmt.Sprintf("%s must be true or false", PlainCommentsKey), "write true or false"}
			}
			continue
		}
		if issue := configValues(event, k, v); issue != nil {
			return issue
		}
	}
	for _, f := range exclusiveFilters {
		if a, b := seen[f], seen[f+"-ignore"]; a != nil && b != nil {
			return &configIssue{max2(a, b), fmt.Sprintf("GitHub refuses %s and %s-ignore on one event", f, f), fmt.Sprintf("keep one; negate a pattern of %s with '!'", f)}
		}
	}
	if event == "workflow_run" && seen["workflows"] == nil {
		return &configIssue{config, "it names no workflows, and GitHub fires workflow_run only for the workflows named", "add workflows: [NAME]"}
	}
	return nil
}

// max2 returns the later of two nodes in the source.
func max2(a, b *yaml.Node) *yaml.Node {
	if b.Line > a.Line || (b.Line == a.Line && b.Column > a.Column) {
		return b
	}
	return a
}

// configKey checks a config key: one GitHub knows, available on event.
func configKey(event string, k *yaml.Node) *configIssue {
	if !slices.Contains(configKeys, k.Value) && k.Value != PlainCommentsKey {
		hint := keysHint(event)
		if valid := validKeys(event); ir.Nearest(k.Value, valid) != "" {
			hint = ir.Suggest(k.Value, valid)
		}
		return &configIssue{k, fmt.Sprintf("GitHub accepts no config key %q", k.Value), hint}
	}
	if keyAvailable(event, k.Value) {
		return nil
	}
	switch {
	case k.Value == PlainCommentsKey:
		return &configIssue{k, fmt.Sprintf("%s is a key of issue_comment triggers only", PlainCommentsKey), "remove it"}
	case k.Value == "types":
		return &configIssue{k, fmt.Sprintf("GitHub has no activity types for %s, so it refuses types", event), keysHint(event)}
	}
	on := filterEvents[strings.TrimSuffix(k.Value, "-ignore")]
	return &configIssue{k, fmt.Sprintf("GitHub has no %q filter for %s (only for %s)", k.Value, event, strings.Join(on, ", ")), keysHint(event)}
}

// configValues checks the values of one config key: a non-empty list of non-empty strings (or
// one), holding no expression, and for types only the event's activity types.
func configValues(event string, k, v *yaml.Node) *configIssue {
	key := k.Value
	var items []*yaml.Node
	switch {
	case v.Kind == yaml.SequenceNode:
		items = v.Content
	case v.Kind == yaml.ScalarNode && v.Tag != "!!null":
		items = []*yaml.Node{v}
	case v.Kind != yaml.ScalarNode:
		return &configIssue{v, fmt.Sprintf("%s must be a list of strings", key), "write [a, b]"}
	}
	if len(items) == 0 {
		at := v
		if v.Kind == yaml.ScalarNode {
			at = k // a null value has no place of its own
		}
		return &configIssue{at, fmt.Sprintf("%s is empty, and GitHub refuses an empty %s", key, key), fmt.Sprintf("list at least one value, or remove %s", key)}
	}
	known := events[event]
	for _, it := range items {
		if it.Kind != yaml.ScalarNode {
			return &configIssue{it, fmt.Sprintf("%s must be a list of strings", key), "write [a, b]"}
		}
		if it.Value == "" {
			return &configIssue{it, fmt.Sprintf("%s holds an empty string", key), "write a value, or remove it"}
		}
		if strings.Contains(it.Value, "${{") {
			return &configIssue{it, fmt.Sprintf("%s holds %q, but GitHub evaluates no expression under on:", key, it.Value), "write the literal value; filter at run time in the behavior"}
		}
		if key == "types" && known != nil && !slices.Contains(known, it.Value) {
			hint := "valid: " + strings.Join(known, ", ")
			if ir.Nearest(it.Value, known) != "" {
				hint = ir.Suggest(it.Value, known)
			}
			return &configIssue{it, fmt.Sprintf("GitHub has no %s activity type %q", event, it.Value), hint}
		}
	}
	return nil
}
