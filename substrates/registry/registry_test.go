package registry

import (
	"reflect"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// The registry is what ir validates targets against: ir's registered targets are exactly the
// substrates' declarations, in the registry's order.
func TestRegistryDeclaresTargetsToIR(t *testing.T) {
	var want []ir.Target
	for _, s := range All() {
		want = append(want, substrates.Declaration(s))
	}
	if got := ir.RegisteredTargets(); !reflect.DeepEqual(got, want) {
		t.Errorf("ir.RegisteredTargets() = %+v, want the registry's declarations %+v", got, want)
	}
	for _, tg := range ir.RegisteredTargets() {
		for _, a := range tg.Aliases {
			if s, ok := Lookup(a); !ok || s.Name() != tg.Name {
				t.Errorf("Lookup(%q) = %v, %v; ir says it is %q", a, s, ok, tg.Name)
			}
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
