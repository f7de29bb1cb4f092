package conformance

import (
	"strings"

	"github.com/autonomyhq/autonomy/substrates"
	"testing"

	"github.com/autonomyhq/autonomy/substrates/registry"
)

// TestMatrixVerified: every catalog entry is declared by every registered substrate, and every
// declaration is borne out by its probe compile.
func TestMatrixVerified(t *testing.T) {
	cells, err := Matrix(registry.All(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if want := len(Features()) * len(registry.All()); len(cells) != want {
		t.Fatalf("%d cells, want %d", len(cells), want)
	}
	for _, c := range cells {
		if !c.Verified {
			t.Errorf("%s on %s (%s): %s", c.Feature, c.Substrate, c.Level, c.Problem)
		}
	}
}

// lying wraps a substrate and overrides some of its declarations.
type lying struct {
	substrates.Substrate
	claims map[string]substrates.Level
}

func (l lying) Support() []substrates.Support {
	var out []substrates.Support
	for _, sp := range l.Substrate.Support() {
		if lv, ok := l.claims[sp.Feature]; ok {
			sp.Level = lv
		}
		out = append(out, sp)
	}
	return out
}

// TestMatrixCatchesFalseClaims: a declaration the probe compile does not bear out fails its cell.
func TestMatrixCatchesFalseClaims(t *testing.T) {
	gh, _ := registry.Lookup("gh-actions")
	lo, _ := registry.Lookup("local")
	subs := []substrates.Substrate{
		lying{gh, map[string]substrates.Level{
			"capability:agent:update": substrates.Supported, // no permission exists
			"field:prelaunch":         substrates.Partial,   // nothing runs it
			"capability:code:merge":   substrates.Supported, // refused by the validator
		}},
		lying{lo, map[string]substrates.Level{
			"capability:code:merge": substrates.Supported, // refused by the validator
		}},
	}
	cells, err := Matrix(subs, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"gh-actions capability:agent:update": "no token permission",
		"gh-actions field:prelaunch":         "does not realize",
		"gh-actions capability:code:merge":   "validator refuses",
		"local capability:code:merge":        "validator refuses",
	}
	for _, c := range cells {
		key := c.Substrate + " " + c.Feature
		if sub, ok := want[key]; ok {
			if c.Verified || !strings.Contains(c.Problem, sub) {
				t.Errorf("%s: verified %v, problem %q, want it to contain %q", key, c.Verified, c.Problem, sub)
			}
			delete(want, key)
		} else if !c.Verified {
			t.Errorf("%s: %s", key, c.Problem)
		}
	}
	if len(want) > 0 {
		t.Errorf("cells missing: %v", want)
	}
}

// TestMatrixNeedsEveryDeclaration: a substrate that leaves a catalog entry undeclared fails it.
func TestMatrixNeedsEveryDeclaration(t *testing.T) {
	lo, _ := registry.Lookup("local")
	cells, err := Matrix([]substrates.Substrate{forgetful{lo, "source:subject.text"}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		if c.Feature == "source:subject.text" && (c.Verified || !strings.Contains(c.Problem, "does not declare")) {
			t.Errorf("undeclared feature: %+v", c)
		}
	}
}

type forgetful struct {
	substrates.Substrate
	drop string
}

func (f forgetful) Support() []substrates.Support {
	var out []substrates.Support
	for _, sp := range f.Substrate.Support() {
		if sp.Feature != f.drop {
			out = append(out, sp)
		}
	}
	return out
}

// Realized reads the wrapped substrate's output as it does: a wrapper changes its declarations,
// not what its compile realizes.
func (l lying) Realized(feature string, out substrates.Output) error {
	return Realized(l.Substrate, feature, out)
}

// Realized reads the wrapped substrate's output as it does.
func (f forgetful) Realized(feature string, out substrates.Output) error {
	return Realized(f.Substrate, feature, out)
}
