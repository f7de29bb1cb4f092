package mergecheck

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// hfsIgnored are the code points HFS+ leaves out of a name when it compares names (git's
// core.protectHFS skips the same): ".github\u200c" is ".github" there.
func hfsIgnored(r rune) bool {
	return r >= 0x200c && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x206a && r <= 0x206f || r == 0xfeff
}

// Fold is the spelling of path that a case-insensitive, normalization-insensitive file system
// (macOS's, Windows') holds it under: NFC, case-folded, without the code points HFS+ ignores.
// Two paths with the same Fold are one file there: ".GitHub/workflows/x.yml" is a workflow.
func Fold(path string) string {
	path = strings.Map(func(r rune) rune {
		if hfsIgnored(r) {
			return -1
		}
		return r
	}, path)
	return caseFold(norm.NFC.String(path))
}

// MatchFold is Match on the Fold of both the glob and the path: what protects a path (the
// workflows, the installation, the human-required paths, the governing documents) protects every
// spelling a checkout on macOS or Windows would write to it. A scope, which permits, matches
// exactly (Match) instead: "SRC/x" is outside "src/**".
func MatchFold(glob, path string) bool { return Match(Fold(glob), Fold(path)) }

// Collisions lists those of files that another path of tree (every path of the tree they land
// in) spells differently but a case-insensitive file system reads as the same file or folder
// ("Docs/VISION.md" beside "docs/VISION.md", "SRC/a" beside "src/b"): checked out there, one
// overwrites the other, so no check of either can be trusted.
func Collisions(files, tree []string) []string {
	spellings := map[string][]string{} // the Fold of every path and folder of the tree, as spelled
	add := func(p string) {
		k := Fold(p)
		if !slices.Contains(spellings[k], p) {
			spellings[k] = append(spellings[k], p)
		}
	}
	for _, p := range append(slices.Clone(tree), files...) {
		for i := range p {
			if p[i] == '/' {
				add(p[:i])
			}
		}
		add(p)
	}
	var bad []string
	for _, f := range files {
		for i := 0; i <= len(f); i++ {
			if i < len(f) && f[i] != '/' {
				continue
			}
			if s := spellings[Fold(f[:i])]; len(s) > 1 {
				bad = append(bad, fmt.Sprintf("%s (also spelled %s)", f, strings.Join(others(s, f[:i]), ", ")))
				break
			}
		}
	}
	return bad
}

// others is spellings without own.
func others(spellings []string, own string) []string {
	var out []string
	for _, s := range spellings {
		if s != own {
			out = append(out, s)
		}
	}
	return out
}

// collisionWhy is why a proposal with Collisions is refused.
const collisionWhy = "it names paths that differ from others only in case or Unicode normalization, which a checkout on macOS or Windows writes as one file or folder; rename them"

// collide is the reason and the paths at fault when files collide with another path of the tree
// of commit (Collisions), "" when none do.
func collide(git Git, files []string, commit string) (string, []string, error) {
	out, err := git("ls-tree", "-r", "-z", "--name-only", "--full-tree", commit)
	if err != nil {
		return "", nil, err
	}
	if bad := Collisions(files, NulPaths(out)); len(bad) > 0 {
		return collisionWhy, bad, nil
	}
	return "", nil, nil
}
