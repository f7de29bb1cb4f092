package kubernetes

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// TestClusterNamesNeverCollide: the fleet's cluster-scoped objects (its admission policies and
// their bindings) are named after its namespace, and no name of one fleet is a name of another,
// nor two of one fleet's the same: fleet "team"'s launches of x-sessions and fleet
// "team-launch-x"'s policy on Jobs were both autonomy-team-launch-x-sessions, and the second
// fleet's apply replaced the first's policy. Each name is a valid object name (a DNS subdomain).
func TestClusterNamesNeverCollide(t *testing.T) {
	namespaces := []string{"team", "team-launch-x", "team-launch", "team-sessions", "team-configmaps", "a", "a-b", "b", "x", "launch", "sessions", "configmaps"}
	objects := []string{"x", "x-sessions", "x-configmaps", "sessions", "configmaps", "launch-x", "b", "a-b", "launch", "b-sessions"}
	seen := map[string]string{}
	add := func(name, what string) {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Errorf("%s: %q is no object name: %v", what, name, errs)
		}
		if prev, ok := seen[name]; ok {
			t.Errorf("%s and %s are both named %q", prev, what, name)
		}
		seen[name] = what
	}
	for _, ns := range namespaces {
		add(AdmissionPolicyName(ns), "fleet "+ns+"'s policy on Jobs")
		add(ConfigMapPolicyName(ns), "fleet "+ns+"'s policy on ConfigMaps")
		for _, obj := range objects {
			add(LaunchPolicyName(ns, obj), "fleet "+ns+"'s policy on the launches of "+obj)
		}
	}
	// The longest: a namespace of 63 characters and an actor's object name of its longest.
	long := "n23456789012345678901234567890123456789012345678901234567890123"
	add(LaunchPolicyName(long, ObjectName("a_very_long_actor_name_that_is_hashed_because_it_is_longer_than_the_base")), "the longest names")
}
