package fastyaml

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRandomDocuments complements FuzzParse, whose byte-level mutations rarely build deep,
// well-indented structure: it generates documents from a small YAML grammar, mostly valid and
// sometimes slightly damaged, and checks Parse against yaml.v3 on each.
func TestRandomDocuments(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	r := rand.New(rand.NewPCG(1, 2))
	taken := 0
	for range n {
		in := randomDocument(r)
		ok, err := compare([]byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if ok {
			taken++
		}
	}
	// Most generated documents are valid and inside the subset; a fast path that bails out on
	// them is not doing its job.
	if taken < n/3 {
		t.Errorf("Parse took only %d of %d generated documents", taken, n)
	}
}

var randomScalars = []string{
	"a", "b c", "a#b", "a #b", "http://x.y/z", "key:value", "x: y", "-x", "-", "--", "~", "null", "Null",
	"true", "False", "yes", "on", "0", "-1", "+1", "1_000", "0x1F", "0o17", "017", "0b11", "1.5", ".5",
	"1e3", ".inf", "-.Inf", ".nan", "2001-12-14", "2001-12-14 21:59:43.10", "99999999999999999999",
	`"q"`, `"a: b"`, `"esc\n\t\"\\"`, `"\u00e9\x41"`, `""`, `'s'`, `'it''s'`, `''`, `'# x'`,
	"é", "日本", "[]", "{}", "[a, b]", "[a, [b, c], {d: e}]", "{a: b, c: [d]}", `{"a":b}`, "[tasks:author]",
	"a, b", "a[0]", "<<", "&x a", "*x", "!t a", "|", ">", "? a", "@a", "%a", "`a`", "a: b: c", `"\/"`,
	"a:b", "::", "-:", ":x", "?x", "x#", "'", `"`, "[a:]", "{a :b}", "[a b, c]", "[a,b]", `{"a":"b"}`,
	"{a: b,c: d}", "[-1, -x, -]", "[a, b,]", "{a}", "[a, [b]]]", "ü ö", `'日本'`, `"a\u65e5"`,
}

func randomDocument(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(8) == 0 {
		b.WriteString("# head comment\n")
	}
	genBlock(r, &b, r.IntN(2)*2, 0, r.IntN(10) == 0)
	s := b.String()
	if r.IntN(10) == 0 {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	if r.IntN(4) == 0 && len(s) > 0 {
		// Damage: delete, duplicate or insert a character somewhere.
		i := r.IntN(len(s))
		switch r.IntN(3) {
		case 0:
			s = s[:i] + s[i+1:]
		case 1:
			s = s[:i] + s[i:i+1] + s[i:]
		default:
			const damage = " -:#\n'\"[]{},\t"
			s = s[:i] + string(damage[r.IntN(len(damage))]) + s[i:]
		}
	}
	return s
}

// genBlock writes a block node whose lines are indented by ind; inline reports that the first
// line continues one already started (after "- "), so its indentation is already written.
func genBlock(r *rand.Rand, b *strings.Builder, ind, depth int, inline bool) {
	pad := strings.Repeat(" ", ind)
	first := func() {
		if !inline {
			b.WriteString(pad)
		}
		inline = false
	}
	maybeComment := func() {
		if r.IntN(6) == 0 {
			b.WriteString(strings.Repeat(" ", r.IntN(ind+3)) + "# note\n")
		}
		if r.IntN(8) == 0 {
			b.WriteString("\n")
		}
	}
	switch k := r.IntN(5); {
	case depth >= 4 || k == 0:
		first()
		b.WriteString(randomScalars[r.IntN(len(randomScalars))] + trailer(r))
	case k <= 2:
		for i, n := 0, 1+r.IntN(3); i < n; i++ {
			first()
			key := randomScalars[r.IntN(len(randomScalars))]
			if r.IntN(2) == 0 {
				key = string(rune('a' + r.IntN(4)))
			}
			b.WriteString(key + strings.Repeat(" ", r.IntN(2)) + ":")
			genValue(r, b, ind, depth, true)
			maybeComment()
		}
	default:
		for i, n := 0, 1+r.IntN(3); i < n; i++ {
			first()
			b.WriteString("-")
			genValue(r, b, ind, depth, false)
			maybeComment()
		}
	}
}

// genValue writes what follows a "key:" or "-" indicator at indentation ind, ending the line.
func genValue(r *rand.Rand, b *strings.Builder, ind, depth int, inMap bool) {
	switch r.IntN(7) {
	case 0:
		b.WriteString(trailer(r))
	case 4:
		genBlockScalar(r, b, ind)
	case 1, 2:
		b.WriteString(" " + randomScalars[r.IntN(len(randomScalars))] + trailer(r))
	case 3:
		if !inMap {
			// "- - x" or "- k: v": a collection starting on the entry's line.
			b.WriteString(strings.Repeat(" ", 1+r.IntN(2)))
			genBlock(r, b, ind+2+r.IntN(2)-1, depth+1, true)
			return
		}
		fallthrough
	default:
		b.WriteString(trailer(r))
		child := ind + 2
		if r.IntN(4) == 0 {
			child = ind + 1 + r.IntN(4)
		}
		if inMap && r.IntN(4) == 0 {
			// An indentless sequence.
			for i, n := 0, 1+r.IntN(2); i < n; i++ {
				b.WriteString(strings.Repeat(" ", ind) + "-")
				genValue(r, b, ind, depth+1, false)
			}
			return
		}
		genBlock(r, b, child, depth+1, false)
	}
}

func trailer(r *rand.Rand) string {
	switch r.IntN(6) {
	case 0:
		return " # c\n"
	case 1:
		return "  \n"
	}
	return "\n"
}

// genBlockScalar writes a block scalar header and body for a value at indentation ind.
func genBlockScalar(r *rand.Rand, b *strings.Builder, ind int) {
	headers := []string{"|", ">", "|-", ">-", "|+", ">+", "|1", ">2-", "|+1"}
	b.WriteString(" " + headers[r.IntN(len(headers))] + trailer(r))
	body := strings.Repeat(" ", ind+1+r.IntN(3))
	for i, n := 0, r.IntN(6); i < n; i++ {
		switch r.IntN(7) {
		case 0:
			b.WriteString("\n")
		case 1:
			b.WriteString(body + strings.Repeat(" ", r.IntN(3)) + "\n")
		case 2:
			b.WriteString(body + strings.Repeat(" ", 1+r.IntN(2)) + "more indented\n")
		case 3:
			b.WriteString(body + "# hash\ttab: x\n")
		default:
			b.WriteString(body + randomScalars[r.IntN(len(randomScalars))] + "\n")
		}
	}
}
