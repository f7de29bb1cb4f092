package kubernetes

import (
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/autonomyhq/autonomy/ir"
)

// grant is one row of the permission table: what a capability lets an actor's ServiceAccount do.
type grant struct {
	group, resource string
	verbs           []string
	// named limits the rule to objects of those names: the templates a launcher may read, the
	// fleet config.
	named func(scope string, agents []string) []string
	// capped rows are granted only in a fleet with a maxConcurrent: the launcher claims a slot
	// in the slots ConfigMap (which compile installs, so no create) and counts the Jobs in
	// flight, whose names it lists.
	capped bool
	// asks rows are granted only when the capability's scope reaches a person: a launcher parks
	// the ask in a ConfigMap it creates (RBAC cannot limit create to names; the fleet's ConfigMap
	// admission policy, admission_asks.go, admits only an ask of such a person naming the
	// asking actor and session, and no other ConfigMap); a lister reads the asks, which RBAC
	// cannot tell from the namespace's other ConfigMaps (none holds a secret: the installation,
	// the fleet config, the slots, and asks keeping only their token's hash).
	asks bool
}

// templates are the PodTemplates a launcher may read: its scope's; unscoped, every one of the
// namespace, which holds the fleet's only (naming them all would grow with launchers × actors).
func templates(scope string, _ []string) []string {
	if scope != "" {
		return []string{ObjectName(scope)}
	}
	return nil
}

func fleetConfig(string, []string) []string { return []string{ConfigMapFleet} }

func slots(string, []string) []string { return []string{SlotsConfigMap} }

// permissions is the table, capability by capability (the gh-actions permission table's
// counterpart). Nothing else is granted: code:* and tasks:* act on the code host, never on the
// cluster, and get no rule. RBAC cannot narrow create, delete or patch of Jobs to an actor; the
// fleet's ValidatingAdmissionPolicy (admission.go) does, for every request of a fleet
// ServiceAccount: a launcher creates only Jobs of the actors its scope names, from their
// templates, and cancel and update touch only the Jobs of theirs.
var permissions = map[string][]grant{
	"agent:launch": {
		{group: "", resource: "podtemplates", verbs: []string{"get"}, named: templates},
		{group: "batch", resource: "jobs", verbs: []string{"create"}},
		{group: "", resource: "configmaps", verbs: []string{"get"}, named: fleetConfig},
		{group: "", resource: "configmaps", verbs: []string{"get", "update"}, named: slots, capped: true},
		{group: "batch", resource: "jobs", verbs: []string{"list"}, capped: true},
		{group: "", resource: "configmaps", verbs: []string{"create"}, asks: true},
	},
	"agent:list": {
		{group: "batch", resource: "jobs", verbs: []string{"get", "list", "watch"}},
		{group: "", resource: "pods", verbs: []string{"get", "list", "watch"}},
		{group: "", resource: "pods/log", verbs: []string{"get"}},
		{group: "", resource: "configmaps", verbs: []string{"get", "list", "watch"}, asks: true},
	},
	"agent:cancel": {
		{group: "batch", resource: "jobs", verbs: []string{"patch"}},
	},
	"agent:update": {
		{group: "batch", resource: "jobs", verbs: []string{"patch"}},
	},
}

// holdsCluster reports whether the actor holds a capability that needs the API: its pods get a
// ServiceAccount token only then.
func holdsCluster(a *ir.Actor) bool {
	return slices.ContainsFunc(a.Capabilities, func(c ir.Capability) bool { return permissions[c.Name] != nil })
}

// rules are the actor's Role rules: the table's rows for its capabilities (the capped rows only
// when the fleet has a maxConcurrent, the asks rows only when the capability's scope reaches one
// of the humans), rows on the same objects merged, in a fixed order.
func rules(a *ir.Actor, agents, humans []string, capped bool) []rbacv1.PolicyRule {
	type key struct{ group, resource, names string }
	verbs := map[key][]string{}
	for _, c := range a.Capabilities {
		for _, g := range permissions[c.Name] {
			if (g.capped && !capped) || (g.asks && !reachesHuman(c.Scope, humans)) {
				continue
			}
			var names []string
			if g.named != nil {
				names = g.named(c.Scope, agents)
			}
			k := key{g.group, g.resource, strings.Join(names, ",")}
			verbs[k] = append(verbs[k], g.verbs...)
		}
	}
	keys := make([]key, 0, len(verbs))
	for k := range verbs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.group != b.group {
			return a.group < b.group
		}
		if a.resource != b.resource {
			return a.resource < b.resource
		}
		return a.names < b.names
	})
	out := make([]rbacv1.PolicyRule, 0, len(keys))
	for _, k := range keys {
		v := slices.Compact(slices.Sorted(slices.Values(verbs[k])))
		r := rbacv1.PolicyRule{APIGroups: []string{k.group}, Resources: []string{k.resource}, Verbs: v}
		if k.names != "" {
			r.ResourceNames = strings.Split(k.names, ",")
		}
		out = append(out, r)
	}
	return out
}

// reachesHuman reports whether a capability scoped to scope ("" for every actor) reaches one of
// the humans.
func reachesHuman(scope string, humans []string) bool {
	return (scope == "" && len(humans) > 0) || slices.Contains(humans, scope)
}
