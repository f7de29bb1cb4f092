package ir

import (
	"fmt"
	"strings"

	"github.com/autonomyhq/autonomy/ir/internal/editdist"
)

// suggest returns the hint for a value that is not one of valid: the nearest valid value when one is
// close enough to be a typo, otherwise the whole list.
func suggest(got string, valid []string) string {
	if near := nearest(got, valid); near != "" {
		return fmt.Sprintf("did you mean %q?", near)
	}
	return "valid: " + list(valid)
}

// list joins values for a hint, eliding a long list (the actors of a large fleet) after ten.
func list(valid []string) string {
	const max = 10
	if len(valid) <= max+2 {
		return strings.Join(valid, ", ")
	}
	return strings.Join(valid[:max], ", ") + fmt.Sprintf(" and %d more", len(valid)-max)
}

// suggestOr is suggest with an alternative appended: the nearest value or the list, then "or ...".
func suggestOr(got string, valid []string, alternative string) string {
	if near := nearest(got, valid); near != "" {
		return fmt.Sprintf("did you mean %q, %s?", near, alternative)
	}
	return "valid: " + list(valid) + ", " + alternative
}

// nearest returns the valid value closest to got by edit distance, or "" when none is close enough
// to be a plausible typo.
func nearest(got string, valid []string) string {
	best, bestDist := "", -1
	g := strings.ToLower(got)
	for _, v := range valid {
		d := editdist.Distance(g, strings.ToLower(v))
		if bestDist < 0 || d < bestDist {
			best, bestDist = v, d
		}
	}
	// One edit per five characters: close enough for a typo (capabilites, code:proposal), far
	// enough that a different word (gitlab for github) is not taken for one.
	limit := max(1, min(3, len(got)/5))
	if bestDist < 0 || bestDist > limit || bestDist >= len(got) {
		return ""
	}
	return best
}

// Suggest is the hint for a value that is not one of valid, in the style of every ir diagnostic:
// "did you mean ...?" when one is close enough to be a typo, otherwise the list. Substrates use
// it for the policy.box keys they own.
func Suggest(got string, valid []string) string { return suggest(got, valid) }
