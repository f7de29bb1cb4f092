package substrates

import (
	"github.com/autonomyhq/autonomy/ir"
)

// Placer is a substrate whose installation takes effect only at one place (gh-actions: the root
// of the git repository, the only .github/workflows GitHub reads). Misplaced says why dir is not
// that place, with the fix, or "" when it is or cannot be told.
type Placer interface {
	Misplaced(dir string) string
}

// Placement is the warning for installing sub's output into dir when sub is a Placer and dir is
// not its place, positioned at the target in the profile's targets (its first line otherwise).
func Placement(sub Substrate, p *ir.Profile, dir string) ir.Diagnostics {
	pl, ok := sub.(Placer)
	if !ok {
		return nil
	}
	why := pl.Misplaced(dir)
	if why == "" {
		return nil
	}
	pos := ir.Pos{Line: 1, Col: 1}
	for _, t := range p.Targets {
		if t.Value == sub.Name() {
			pos = t.Pos
		}
	}
	return ir.Diagnostics{{File: p.File, Pos: pos, Severity: ir.Warning, Message: why}}
}
