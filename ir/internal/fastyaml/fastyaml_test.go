package fastyaml

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// cases covers each construct of the subset and the edges around it. ok records whether Parse
// is expected to take the input, so that the fast path provably covers the common subset
// rather than passing the differential check by bailing out.
var cases = []struct {
	name, in string
	ok       bool
}{
	// Block mappings and empty values.
	{"map", "a: b", true},
	{"map newline", "a: b\nc: d\n", true},
	{"null at eof", "a:", true},
	{"nulls", "a:\nb:\nc: ~\n", true},
	{"trailing spaces", "a:   \nb: 1   \nc: x y  \n", true},
	{"space before colon", "a  : b\nc :\n", true},
	{"nested maps", "a:\n  b:\n    c: d\n  e: f\ng: h\n", true},
	{"indented root", "  a: 1\n  b:\n    c: 2\n", true},
	{"scalar on next line", "a:\n  b\nc:\n  \"d\"\ne:\n  [f]\n", true},
	{"duplicate keys", "a: 1\na: 2\n", true},
	{"plain key chars", "a:b: c\n-1: x\nb[0]: y\nx.y/z: w\n", true},

	// Block sequences.
	{"seq", "- a\n- b\n", true},
	{"seq nulls", "-\n- \n-   # c\n- a\n-", true},
	{"seq in seq", "- - a\n  - b\n- - c\n- - - d\n", true},
	{"compact map", "- a: 1\n  b: 2\n- c: 3\n", true},
	{"compact map wide", "-   a: 1\n    b:\n", true},
	{"item on next line", "-\n  a: 1\n  b: 2\n-\n  - x\n-\n  y\n", true},
	{"seq under key same column", "key:\n- a\n- b\nnext: 1\n", true},
	{"seq under key indented", "key:\n  - a\n  - b\n", true},
	{"indentless in compact", "- a:\n  - x\n  b: 1\n- y\n", true},
	{"indentless of maps", "a:\n- b: 1\n  c: 2\nd: 3\n", true},
	{"indentless nulls", "a:\n-\n- b\n", true},
	{"null then dedent", "- a:\n  b:\n- c\n", true},

	// Comments.
	{"comments everywhere", "# head\n\na: b # trailing\n  # indented\n\n# col 0\nc: # after colon\n  d: e\n\n# tail\n", true},
	{"comment before item", "items:\n  - # c\n    x\n", true},
	{"comment between key and value", "a:\n# c\n  b: 1\n", true},
	{"hash inside plain", "a: b#c\nd: e #f\ng: h #i: j\n", true},
	{"hash inside quotes", "a: 'x # y' # z\n\"d #e\": f\n", true},
	{"hash right after quote", "a: \"x\"#c\n", false},
	{"hash right after flow", "a: [b]#c\n", false},
	{"tab in comment", "# tab\tin comment\na: b\n", true},

	// Scalars.
	{"colon inside plain", "url: http://x.y/z?q=1#frag\na: key:value\n", true},
	{"commas in block plain", "a: x, y\nb: c[0]\nc: {d\n", false},
	{"commas and brackets in block plain", "a: x, y\nb: c[0]\nc: d}\n", true},
	{"dashes", "b: -x\nc: --\nd: ---\ne: [-, -1]\n", true},
	{"dash alone as value", "a: -\n", false},
	{"quoted", "\"quoted key\": v\n'single key': w\n\"a: b\": c\n", true},
	{"empty quoted", "a: \"\"\nb: ''\n", true},
	{"single quote escape", "a: 'it''s'\nb: ''''\n", true},
	{"double quote escapes", `a: "x\ty\n\\ \" \' \0\a\b\v\f\r\e\ \N\_\L\P \x41\u00e9\U0001F600"`, true},
	{"slash escape", `a: "\/"`, false},
	{"bad escapes", `a: "\q"`, false},
	{"surrogate escape", `a: "\ud800"`, false},
	{"ints", "a: 1\nb: -1\nc: +1\nd: 1_000\ne: 0x1F\nf: 0o17\ng: 017\nh: 0b101\ni: -0b101\nj: -0o17\nk: 0x_1F\nl: +0x1F\nm: 08\nn: 1-5\no: 99999999999999999999\np: 0b2\nq: -0x\n", true},
	{"floats", "a: 1.5\nb: 1e3\nc: .5\nd: -.5\ne: 1.\nf: 1e\ng: .inf\nh: -.Inf\ni: +.INF\nj: .nan\nk: .NaN\nl: .NaNx\nm: 1.0e+3\nn: .e1\no: 1_0.5\np: 0x1p3\nq: +.5e-3\n", true},
	{"bools and nulls", "- true\n- True\n- TRUE\n- tRUE\n- false\n- yes\n- no\n- on\n- off\n- y\n- n\n- ~\n- null\n- Null\n- NULL\n- nULL\n", true},
	{"timestamps", "- 2001-12-14\n- 2001-12-14t21:59:43.10-05:00\n- 2001-12-14T21:59:43Z\n- 2001-12-14 21:59:43.10\n- 2001-12-14 21:59:43.10 -5\n- 2001-1-1\n- 20011-12-14\n- 2001-13-01\n", true},
	{"root scalars", "hello", true},
	{"root number", "  123  # c\n", true},
	{"root quoted", "'x'", true},
	{"unicode columns", "é: [é, b]\nñ: {\"x\": ñ, y: \"zé\"}\n日本: [語, 'ü', {ö: ä}]\n", true},
	{"CRLF", "a: b\r\nc:\r\n  - d # e\r\n# c\r\nf: 'g'\r\n", true},

	// Block scalars.
	{"literal", "a: |\n  x\n   y\n\n  z\n", true},
	{"folded", "a: >\n  x\n  y\n\n  z\n", true},
	{"folded more indented", "a: >-\n  folded\n  text\n    more indented\n  back\n\n\n  end\n", true},
	{"chomping", "a: |-\n  x\n\nb: |+\n  x\n\n\nc: >+\n  y\n\nd: 1\n", true},
	{"indentation indicator", "a: |2\n   x\n  y\nb: >-1\n  z\n", true},
	{"block scalars in seq", "- |\n  x\n- >\n  y\n- - |-\n    z\n", true},
	{"block scalar in compact map", "- a: |\n    x\n  b: 1\n", true},
	{"block scalar root", "|\n text\n", true},
	{"block scalar on next line", "a:\n  |\n    x\n", true},
	{"block scalar hash lines", "a: |\n  # not a comment\n  x: y\n# comment\nb: 1\n", true},
	{"block scalar empty", "a: |\nb: >\n\nc: |-\n", true},
	{"block scalar leading empty lines", "a: |\n\n  \n  x\n", true},
	{"block scalar blank lines", "a: >\n  x\n   \n     \n  y\n", true},
	{"block scalar CRLF", "a: |\r\n  x\r\n\r\n  y\r\nb: >\r\n  z\r\n", true},
	{"block scalar tab content", "a: |\n  x\tz\n  \ty\n", true},
	{"block scalar header comment", "a: | # c\n  x\n", true},
	{"block scalar at eof", "a: >\n  x", true},
	{"block scalar no content at eof", "a: |", true},
	{"block scalar tab indent", "a: |\n\tx\n", false},
	{"block scalar zero indicator", "a: |0\n  x\n", false},
	{"block scalar header junk", "a: | x\n  y\n", false},
	{"block scalar bad dedent", "a: |\n    x\n  y: 1\n", false},

	// Flow collections.
	{"flow seq", "a: [b, c]\n", true},
	{"flow nested", "a: {b: c, d: [e, f, {g: h}]}\n", true},
	{"flow mixed", "a: [[1, 2], {x: y}, \"q\", 'r', -1, -]\n", true},
	{"flow empty", "a: []\nb: {}\nc: [ ]\nd: [[]]\n", true},
	{"flow roots", "[a, b]", true},
	{"flow root map", "{a: 1}  # c\n", true},
	{"flow json", `{"a":b, "c":[d], "e" : "f"}`, true},
	{"flow plain colon", "a: [tasks:author, a:]\n", true},
	{"flow in seq", "- [a, b]\n- {c: d}\n", true},
	{"flow trailing comma", "a: [b, c,]\n", false},
	{"flow empty entry", "a: [b, , c]\n", false},
	{"flow key without value", "a: {b}\n", false},
	{"flow empty value", "a: {b: }\n", false},
	{"flow adjacent colon", "a: {b :c}\n", false},
	{"flow pair in seq", "a: [b: c]\n", false},
	{"flow multiline", "a: [b,\n  c]\n", false},
	{"flow as key", "[a]: b\n", false},
	{"flow then junk", "a: [b] c\n", false},

	// Outside the subset.
	{"empty", "", false},
	{"only comments", "# only comment\n\n", false},
	{"only blanks", "   \n\n", false},
	{"document start", "---\na: b\n", false},
	{"document end", "a: b\n...\n", false},
	{"directive", "%YAML 1.2\n---\na: b\n", false},
	{"two documents", "a: b\n---\nc: d\n", false},
	{"anchor and alias", "a: &x b\nc: *x\n", false},
	{"tag", "a: !!str b\n", false},
	{"complex key", "? a\n: b\n", false},
	{"merge key", "<<: {a: b}\n", false},
	{"merge value", "a: <<\n", false},
	{"multiline plain", "a: b\n  c\n", false},
	{"multiline plain in seq", "- a\n  b\n", false},
	{"multiline root plain", "hello\nworld\n", false},
	{"multiline quoted", "a: \"b\n  c\"\n", false},
	{"lone CR", "a: b\rc: d\n", false},
	{"tab separator", "a:\tb\n", false},
	{"tab indent", "a:\n\tb: c\n", false},
	{"BOM", "\ufeffa: b\n", false},
	{"control char", "a: b\x01\n", false},
	{"reserved starts", "a: @x\n", false},
	{"question start", "a: ?x\n", false},

	// Malformed.
	{"bad dedent", "a:\n    b: 1\n  c: 2\n", false},
	{"bad indent", "a: 1\n  b: 2\n", false},
	{"value value", "key: value: other\n", false},
	{"unterminated quote", "a: \"unterminated\n", false},
	{"seq then key", "- a\nb: c\n", false},
	{"key without colon", "a: 1\nb\n", false},
	{"map then seq", "a: 1\n- b\n", false},
	{"seq on key line", "a: - b\n", false},
	{"quoted junk", "a: \"b\" c\n", false},
}

// compare decodes in with both yaml.v3 and Parse and reports whether Parse took the input, and
// any disagreement.
func compare(in []byte) (ok bool, err error) {
	got, ok := Parse(in)
	if !ok {
		return false, nil
	}
	var want yaml.Node
	if yerr := yaml.Unmarshal(in, &want); yerr != nil {
		return true, fmt.Errorf("Parse accepted input that yaml.v3 rejects: %v", yerr)
	}
	return true, equalNodes(&want, got, "doc")
}

// equalNodes reports the first difference between want and got, located by path.
func equalNodes(want, got *yaml.Node, path string) error {
	switch {
	case want == nil || got == nil:
		if want != got {
			return fmt.Errorf("%s: want %v, got %v", path, want, got)
		}
		return nil
	case want.Kind != got.Kind:
		return fmt.Errorf("%s: Kind: want %v, got %v", path, want.Kind, got.Kind)
	case want.Tag != got.Tag:
		return fmt.Errorf("%s: Tag: want %q, got %q", path, want.Tag, got.Tag)
	case want.Value != got.Value:
		return fmt.Errorf("%s: Value: want %q, got %q", path, want.Value, got.Value)
	case want.Style != got.Style:
		return fmt.Errorf("%s: Style: want %v, got %v", path, want.Style, got.Style)
	case want.Line != got.Line || want.Column != got.Column:
		return fmt.Errorf("%s: position: want %d:%d, got %d:%d", path, want.Line, want.Column, got.Line, got.Column)
	case len(want.Content) != len(got.Content):
		return fmt.Errorf("%s: len(Content): want %d, got %d", path, len(want.Content), len(got.Content))
	}
	for i := range want.Content {
		if err := equalNodes(want.Content[i], got.Content[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

func TestParse(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := compare([]byte(tc.in))
			if err != nil {
				t.Fatalf("%q: %v", tc.in, err)
			}
			if ok != tc.ok {
				t.Errorf("%q: ok = %v, want %v", tc.in, ok, tc.ok)
			}
		})
	}
}

// TestParseLimits checks the bail-outs that keep the fast path clear of yaml.v3's limits.
func TestParseLimits(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		ok       bool
	}{
		{"long key", strings.Repeat("k", 900) + ": v\n", true},
		{"too long key", strings.Repeat("k", 1100) + ": v\n", false},
		{"too long flow key", "{" + strings.Repeat("k", 1100) + ": v}\n", false},
		{"long value", "k: " + strings.Repeat("v", 5000) + "\n", true},
		{"deep flow", strings.Repeat("[", 900) + strings.Repeat("]", 900), true},
		{"too deep flow", strings.Repeat("[", 2000) + strings.Repeat("]", 2000), false},
		{"too deep block", strings.Repeat("- ", 2000) + "x\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := compare([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.ok {
				t.Errorf("ok = %v, want %v", ok, tc.ok)
			}
		})
	}
}

// TestParseProfile checks the fast path on the benchmark's profile shape.
func TestParseProfile(t *testing.T) {
	for _, crlf := range []bool{false, true} {
		in := profile(50)
		if crlf {
			in = bytes.ReplaceAll(in, []byte("\n"), []byte("\r\n"))
		}
		ok, err := compare(in)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatalf("crlf=%v: Parse bailed out on the profile", crlf)
		}
	}
}
