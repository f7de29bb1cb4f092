package main

import (
	"errors"
	"fmt"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

// targetChecks runs the compile-time checks of every target the profile declares that this build
// implements, in memory, and returns their diagnostics: what compile would refuse (a bad
// policy.box.local.timezone, both spellings of a gh-actions setting) and what it would warn
// about. So a profile that validates compiles. p must be free of ir errors.
func targetChecks(p *resolved.Profile) (ir.Diagnostics, error) {
	var out ir.Diagnostics
	seen := map[string]bool{}
	for _, t := range p.Targets {
		sub, ok := registry.Lookup(t.Value)
		if !ok || seen[sub.Name()] {
			continue
		}
		seen[sub.Name()] = true
		warnings, err := substrates.Diagnose(sub, p)
		var diags ir.Diagnostics
		switch {
		case errors.As(err, &diags):
			out = append(out, diags...)
		case err != nil:
			return nil, fmt.Errorf("%s: compiling for %s: %w", p.File, sub.Name(), err)
		default:
			out = append(out, warnings...)
		}
	}
	return out.Sort(), nil
}
