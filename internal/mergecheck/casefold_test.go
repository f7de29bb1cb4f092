package mergecheck

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
)

// TestCaseFoldIsXTextFold: caseFold folds every rune as golang.org/x/text/cases.Fold() does,
// and whole strings too, bytes that are not UTF-8 among them.
func TestCaseFoldIsXTextFold(t *testing.T) {
	fold := cases.Fold()
	var all strings.Builder
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		all.WriteRune(r)
		if got, want := caseFold(string(r)), fold.String(string(r)); got != want {
			t.Errorf("caseFold(%U) = %+q, x/text folds it to %+q", r, got, want)
		}
	}
	if got, want := caseFold(all.String()), fold.String(all.String()); got != want {
		t.Errorf("caseFold of every rune in a row differs from x/text's")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "Z", "ß", "ẞ", "ſ", "ς", "Σ", "ﬃ", "ᾈ", "\u0345", "Ꭰ", "ꭰ", "İ", "\xff", "\xe2\x82", "/", ".GitHub", "\u200c", "é", "e\u0301"}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		if got, want := caseFold(b.String()), fold.String(b.String()); got != want {
			t.Errorf("caseFold(%+q) = %+q, x/text folds it to %+q", b.String(), got, want)
		}
	}
}

// FuzzCaseFold: caseFold agrees with x/text's fold on any input.
func FuzzCaseFold(f *testing.F) {
	f.Add(".GitHub/Workflows/ß.yml")
	f.Add("\xffſ\u0345ᾈ")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := caseFold(s), cases.Fold().String(s); got != want {
			t.Errorf("caseFold(%+q) = %+q, x/text folds it to %+q", s, got, want)
		}
	})
}
