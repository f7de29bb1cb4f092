package substrates

import (
	"fmt"
	"path/filepath"

	"github.com/autonomyhq/autonomy/ir"
)

// Placer is a substrate whose installation takes effect only at one place (gh-actions: the root
// of the git repository, the only .github/workflows GitHub reads). Misplaced says why dir is not
// that place, with the fix, or "" when it is or cannot be told.
type Placer interface {
	Misplaced(p *ir.Profile, dir string) string
}

// Placement is the warning for installing sub's output into dir when sub is a Placer and dir is
// not its place, positioned at the target in the profile's targets (its first line otherwise).
func Placement(sub Substrate, p *ir.Profile, dir string) ir.Diagnostics {
	pl, ok := sub.(Placer)
	if !ok {
		return nil
	}
	why := pl.Misplaced(p, dir)
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

// Rivaler is a substrate that can tell what else the installation directory holds that would undo
// what it installs: on gh-actions, a workflow of someone else's that posts a status autonomy's
// gate requires (the reference's own human-approval gate, carried along in a migration, posts
// success for heads autonomy holds for a maintainer). Rivals says each, positioned where the
// rival file names the status, with the fix.
type Rivaler interface {
	Rivals(dir string, out *Output) ir.Diagnostics
}

// Rivals is sub's Rivals of dir when sub is a Rivaler.
func Rivals(sub Substrate, dir string, out *Output) ir.Diagnostics {
	if rv, ok := sub.(Rivaler); ok {
		return rv.Rivals(dir, out)
	}
	return nil
}

// InsideProfile says why dir, a folder inside the profile's own (a subfolder: its skills), is
// not where an installation goes (newc8 compiled from autonomy/skills with --dir .); "" when it
// is not inside, or is the profile's folder itself.
func InsideProfile(p *ir.Profile, dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil || p == nil || p.Dir == "" {
		return ""
	}
	pdir, err := filepath.Abs(p.Dir)
	if err != nil || abs == pdir {
		return ""
	}
	if rel, err := filepath.Rel(pdir, abs); err != nil || !filepath.IsLocal(rel) {
		return ""
	}
	return fmt.Sprintf("installing into %s, a folder inside the profile's own %s: the installation belongs at the root of the repository the fleet runs in (compile with --dir %s, or the repository's root)",
		dir, pdir, filepath.Dir(pdir))
}
