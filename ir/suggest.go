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
		return strings.TrimSpace(fmt.Sprintf("did you mean %q? %s", near, lookalike(got)))
	}
	if odd := lookalike(got); odd != "" {
		return "valid: " + list(valid) + "; " + odd
	}
	return "valid: " + list(valid)
}

// lookalike explains a value that may look like a valid one but holds a character that is not
// ASCII (a Cyrillic е for a Latin e), or "".
func lookalike(got string) string {
	if odd := oddRune(got); odd != "" {
		return fmt.Sprintf("%q has %s", got, odd)
	}
	return ""
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
		return strings.TrimSpace(fmt.Sprintf("did you mean %q, %s? %s", near, alternative, lookalike(got)))
	}
	if odd := lookalike(got); odd != "" {
		return "valid: " + list(valid) + ", " + alternative + "; " + odd
	}
	return "valid: " + list(valid) + ", " + alternative
}

// nearest returns the valid value closest to got by edit distance, or "" when none is close enough
// to be a plausible typo.
func nearest(got string, valid []string) string {
	best, bestDist := "", -1
	// A character that is not ASCII counts as one edit, not as its UTF-8 bytes: a look-alike
	// letter (a Cyrillic е for e) is a one-character typo of the valid name.
	g := strings.Map(func(r rune) rune {
		if r > 0x7e {
			return 0
		}
		return r
	}, strings.ToLower(got))
	// One edit per five characters: close enough for a typo (capabilites, code:proposal), far
	// enough that a different word (gitlab for github) is not taken for one.
	limit := max(1, min(3, len(g)/5))
	for _, v := range valid {
		lv := strings.ToLower(v)
		d := editdist.Distance(g, lv)
		if d > limit && !inflected(g, lv) {
			continue
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = v, d
		}
	}
	if bestDist < 0 || bestDist >= len(g) {
		return ""
	}
	return best
}

// inflected reports whether v is got with an ending of one or two letters (open for opened,
// label for labeled): a short word has too small an edit budget to reach its inflection.
func inflected(got, v string) bool {
	return len(got) >= 3 && strings.HasPrefix(v, got) && len(v)-len(got) <= 2
}

// Suggest is the hint for a value that is not one of valid, in the style of every ir diagnostic:
// "did you mean ...?" when one is close enough to be a typo, otherwise the list. Substrates use
// it for the policy.box keys they own.
func Suggest(got string, valid []string) string { return suggest(got, valid) }

// Nearest returns the value of valid that got is a plausible typo of ("did you mean"), or "".
func Nearest(got string, valid []string) string { return nearest(got, valid) }
