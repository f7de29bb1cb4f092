// Package registry lists the substrates autonomy can compile to, in a fixed order: an explicit
// slice, never init() self-registration, so the set and its order are visible in one place.
package registry

import (
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// All is every substrate, in the order of ir.Targets.
var All = []substrates.Substrate{
	// gh-actions: GitHub Actions, one workflow per actor; alias github.
	ghactions.Substrate{},
	// local: one machine; autonomy itself is the runner and the trigger executor.
	local.Substrate{},
}

// Lookup finds a substrate by its name or one of its aliases.
func Lookup(name string) (substrates.Substrate, bool) {
	for _, s := range All {
		if s.Name() == name {
			return s, true
		}
		for _, a := range s.Aliases() {
			if a == name {
				return s, true
			}
		}
	}
	return nil, false
}

// Names lists the registered substrates' names, in order.
func Names() []string {
	out := make([]string, len(All))
	for i, s := range All {
		out[i] = s.Name()
	}
	return out
}
