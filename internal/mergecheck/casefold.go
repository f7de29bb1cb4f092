package mergecheck

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// caseFold is Unicode's full case folding (CaseFolding.txt, statuses C and F) of s, which is
// golang.org/x/text/cases.Fold(): a rune folds to its lower case, but for the Cherokee letters
// (which fold to their upper case) and the runes of fullFolds. Bytes that are not UTF-8 are kept.
// It is here, not x/text/cases, because that package's init parses its languages' tags in every
// autonomy process; TestCaseFoldIsXTextFold holds the two equal on every rune.
func caseFold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteByte(s[i])
		case r >= 0x13F8 && r <= 0x13FD || r >= 0xAB70 && r <= 0xABBF:
			b.WriteRune(unicode.ToUpper(r))
		default:
			if f, ok := fullFold(r); ok {
				b.WriteString(f)
			} else {
				b.WriteRune(unicode.ToLower(r))
			}
		}
		i += n
	}
	return b.String()
}

// fullFold is r's folding when it is not unicode.ToLower(r).
func fullFold(r rune) (string, bool) {
	i := sort.Search(len(fullFolds), func(i int) bool { return fullFolds[i].r >= r })
	if i < len(fullFolds) && fullFolds[i].r == r {
		return fullFolds[i].fold, true
	}
	return "", false
}

// fullFolds are the runes whose case folding is not their lower case (the Cherokee letters
// aside), in order: the full foldings to several runes (ß is ss) and the simple ones to another
// rune than the lower case (ſ is s, ς is σ). Derived from x/text/cases; TestCaseFoldIsXTextFold
// fails if a Unicode version changes one.
var fullFolds = [...]struct {
	r    rune
	fold string
}{
	{0x00B5, "\u03bc"},
	{0x00DF, "ss"},
	{0x0130, "i\u0307"},
	{0x0149, "\u02bcn"},
	{0x017F, "s"},
	{0x01F0, "j\u030c"},
	{0x0345, "\u03b9"},
	{0x0390, "\u03b9\u0308\u0301"},
	{0x03B0, "\u03c5\u0308\u0301"},
	{0x03C2, "\u03c3"},
	{0x03D0, "\u03b2"},
	{0x03D1, "\u03b8"},
	{0x03D5, "\u03c6"},
	{0x03D6, "\u03c0"},
	{0x03F0, "\u03ba"},
	{0x03F1, "\u03c1"},
	{0x03F5, "\u03b5"},
	{0x0587, "\u0565\u0582"},
	{0x1C80, "\u0432"},
	{0x1C81, "\u0434"},
	{0x1C82, "\u043e"},
	{0x1C83, "\u0441"},
	{0x1C84, "\u0442"},
	{0x1C85, "\u0442"},
	{0x1C86, "\u044a"},
	{0x1C87, "\u0463"},
	{0x1C88, "\ua64b"},
	{0x1E96, "h\u0331"},
	{0x1E97, "t\u0308"},
	{0x1E98, "w\u030a"},
	{0x1E99, "y\u030a"},
	{0x1E9A, "a\u02be"},
	{0x1E9B, "\u1e61"},
	{0x1E9E, "ss"},
	{0x1F50, "\u03c5\u0313"},
	{0x1F52, "\u03c5\u0313\u0300"},
	{0x1F54, "\u03c5\u0313\u0301"},
	{0x1F56, "\u03c5\u0313\u0342"},
	{0x1F80, "\u1f00\u03b9"},
	{0x1F81, "\u1f01\u03b9"},
	{0x1F82, "\u1f02\u03b9"},
	{0x1F83, "\u1f03\u03b9"},
	{0x1F84, "\u1f04\u03b9"},
	{0x1F85, "\u1f05\u03b9"},
	{0x1F86, "\u1f06\u03b9"},
	{0x1F87, "\u1f07\u03b9"},
	{0x1F88, "\u1f00\u03b9"},
	{0x1F89, "\u1f01\u03b9"},
	{0x1F8A, "\u1f02\u03b9"},
	{0x1F8B, "\u1f03\u03b9"},
	{0x1F8C, "\u1f04\u03b9"},
	{0x1F8D, "\u1f05\u03b9"},
	{0x1F8E, "\u1f06\u03b9"},
	{0x1F8F, "\u1f07\u03b9"},
	{0x1F90, "\u1f20\u03b9"},
	{0x1F91, "\u1f21\u03b9"},
	{0x1F92, "\u1f22\u03b9"},
	{0x1F93, "\u1f23\u03b9"},
	{0x1F94, "\u1f24\u03b9"},
	{0x1F95, "\u1f25\u03b9"},
	{0x1F96, "\u1f26\u03b9"},
	{0x1F97, "\u1f27\u03b9"},
	{0x1F98, "\u1f20\u03b9"},
	{0x1F99, "\u1f21\u03b9"},
	{0x1F9A, "\u1f22\u03b9"},
	{0x1F9B, "\u1f23\u03b9"},
	{0x1F9C, "\u1f24\u03b9"},
	{0x1F9D, "\u1f25\u03b9"},
	{0x1F9E, "\u1f26\u03b9"},
	{0x1F9F, "\u1f27\u03b9"},
	{0x1FA0, "\u1f60\u03b9"},
	{0x1FA1, "\u1f61\u03b9"},
	{0x1FA2, "\u1f62\u03b9"},
	{0x1FA3, "\u1f63\u03b9"},
	{0x1FA4, "\u1f64\u03b9"},
	{0x1FA5, "\u1f65\u03b9"},
	{0x1FA6, "\u1f66\u03b9"},
	{0x1FA7, "\u1f67\u03b9"},
	{0x1FA8, "\u1f60\u03b9"},
	{0x1FA9, "\u1f61\u03b9"},
	{0x1FAA, "\u1f62\u03b9"},
	{0x1FAB, "\u1f63\u03b9"},
	{0x1FAC, "\u1f64\u03b9"},
	{0x1FAD, "\u1f65\u03b9"},
	{0x1FAE, "\u1f66\u03b9"},
	{0x1FAF, "\u1f67\u03b9"},
	{0x1FB2, "\u1f70\u03b9"},
	{0x1FB3, "\u03b1\u03b9"},
	{0x1FB4, "\u03ac\u03b9"},
	{0x1FB6, "\u03b1\u0342"},
	{0x1FB7, "\u03b1\u0342\u03b9"},
	{0x1FBC, "\u03b1\u03b9"},
	{0x1FBE, "\u03b9"},
	{0x1FC2, "\u1f74\u03b9"},
	{0x1FC3, "\u03b7\u03b9"},
	{0x1FC4, "\u03ae\u03b9"},
	{0x1FC6, "\u03b7\u0342"},
	{0x1FC7, "\u03b7\u0342\u03b9"},
	{0x1FCC, "\u03b7\u03b9"},
	{0x1FD2, "\u03b9\u0308\u0300"},
	{0x1FD3, "\u03b9\u0308\u0301"},
	{0x1FD6, "\u03b9\u0342"},
	{0x1FD7, "\u03b9\u0308\u0342"},
	{0x1FE2, "\u03c5\u0308\u0300"},
	{0x1FE3, "\u03c5\u0308\u0301"},
	{0x1FE4, "\u03c1\u0313"},
	{0x1FE6, "\u03c5\u0342"},
	{0x1FE7, "\u03c5\u0308\u0342"},
	{0x1FF2, "\u1f7c\u03b9"},
	{0x1FF3, "\u03c9\u03b9"},
	{0x1FF4, "\u03ce\u03b9"},
	{0x1FF6, "\u03c9\u0342"},
	{0x1FF7, "\u03c9\u0342\u03b9"},
	{0x1FFC, "\u03c9\u03b9"},
	{0xFB00, "ff"},
	{0xFB01, "fi"},
	{0xFB02, "fl"},
	{0xFB03, "ffi"},
	{0xFB04, "ffl"},
	{0xFB05, "st"},
	{0xFB06, "st"},
	{0xFB13, "\u0574\u0576"},
	{0xFB14, "\u0574\u0565"},
	{0xFB15, "\u0574\u056b"},
	{0xFB16, "\u057e\u0576"},
	{0xFB17, "\u0574\u056d"},
}
