package registry

import (
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// The registry and ir.Targets (what validation accepts) must agree: every registered substrate
// is a valid target, in the same relative order, and its aliases are ir's aliases.
func TestRegistryMatchesIRTargets(t *testing.T) {
	at := -1
	for _, s := range All {
		i := indexOf(ir.Targets, s.Name())
		if i < 0 {
			t.Errorf("substrate %q is not in ir.Targets %v", s.Name(), ir.Targets)
			continue
		}
		if i < at {
			t.Errorf("substrate %q is registered out of ir.Targets order %v", s.Name(), ir.Targets)
		}
		at = i
		for _, a := range s.Aliases() {
			if ir.TargetAliases[a] != s.Name() {
				t.Errorf("alias %q of %q: ir.TargetAliases maps it to %q", a, s.Name(), ir.TargetAliases[a])
			}
		}
	}
	for alias, name := range ir.TargetAliases {
		if s, ok := Lookup(alias); ok && s.Name() != name {
			t.Errorf("Lookup(%q) = %q, ir says %q", alias, s.Name(), name)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, name := range []string{"gh-actions", "github"} {
		if s, ok := Lookup(name); !ok || s.Name() != "gh-actions" {
			t.Errorf("Lookup(%q) = %v, %v; want gh-actions", name, s, ok)
		}
	}
	if _, ok := Lookup("gitlab"); ok {
		t.Error("Lookup(gitlab) found a substrate")
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
