package ir

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir/internal/fastyaml"
)

// TestUnclosedFlowIsPlacedAtItsBracket: a [ or { that is never closed is reported at the bracket,
// not where yaml.v3 gave up (the next line's key); an error inside a collection that does close,
// and brackets in comments, quotes or block scalars, leave the position where the error is.
func TestUnclosedFlowIsPlacedAtItsBracket(t *testing.T) {
	const head = "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  w:\n    behavior: w\n"
	cases := []struct{ body, want string }{
		// The case: the key before it used to take the blame (6:5).
		{"    capabilities: [tasks:converse\n    triggers:\n      - dispatch: true\n",
			"ir.yml:6:19: YAML syntax error: this [ is never closed (close it with ], and separate its items with commas)"},
		// At the end of the file.
		{"    triggers:\n      - dispatch: true\n    capabilities: [tasks:converse\n",
			"ir.yml:8:19: YAML syntax error: this [ is never closed"},
		// A mapping, in a list item.
		{"    triggers:\n      - { dispatch: true\n    capabilities: [tasks:converse]\n",
			"ir.yml:7:9: YAML syntax error: this { is never closed (close it with }, and separate its entries with commas)"},
		// The inner of two, after a bracket in a comment, a quoted string and a block scalar.
		{"    # [ not this one\n    timeout: \"[ nor this\"\n    prelaunch: |\n      [ nor this\n    capabilities: [tasks:converse, [agent:list\n    triggers:\n      - dispatch: true\n",
			"ir.yml:10:36: YAML syntax error: this [ is never closed"},
		// A multi-line list that closes, missing a comma inside: not the bracket's fault.
		{"    capabilities: [\n      \"tasks:converse\" \"agent:list\"\n    ]\n    triggers:\n      - dispatch: true\n",
			"ir.yml:7:"},
	}
	checkPlaced(t, head, cases)
}

// TestMismatchAndQuotePlaced: a ] or } that closes the other bracket is reported at the closer,
// naming its opener; a double quote not closed on its line, which runs on to the next quote
// lines later, is reported at the quote, not where yaml.v3 gave up. A quoted string that does go
// on over two lines is not blamed for an error after it.
func TestMismatchAndQuotePlaced(t *testing.T) {
	const head = "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  w:\n    behavior: w\n"
	checkPlaced(t, head, []struct{ body, want string }{
		// The review's case: placed at the key (6:5).
		{"    capabilities: [tasks:converse}\n    triggers:\n      - dispatch: true\n",
			"ir.yml:6:34: YAML syntax error: this } does not close the [ at 6:19 (close the [ with ])"},
		{"    triggers:\n      - { dispatch: true]\n    capabilities: [tasks:converse]\n",
			"ir.yml:7:25: YAML syntax error: this ] does not close the { at 7:9 (close the { with })"},
		// The review's case: "mapping values are not allowed" at 8:9.
		{"    capabilities: \"tasks:converse\n    triggers:\n      - cron: \"0 9 * * *\"\n",
			"ir.yml:6:19: YAML syntax error: this \" is never closed (close it on its line, or remove it: a quoted string runs on to the next \", lines later)"},
		{"    capabilities: [tasks:converse]\n    prelaunch: 'echo a\n    triggers:\n      - cron: '0 9 * * *'\n",
			"ir.yml:7:16: YAML syntax error: this ' is never closed"},
		// A string over two lines, then an unrelated error.
		{"    prelaunch: \"echo a\n      b\"\n    capabilities: [tasks:converse]\n    timeout: a: b\n    triggers:\n      - dispatch: true\n",
			"ir.yml:9:"},
	})
}

// TestColonInPlainValuePlaced: a ": " (or a ":" ending the line) inside an unquoted value, which
// yaml.v3 reports as "mapping values are not allowed" with a line only, is placed at the colon and
// the fix is the value quoted; a key indented under a value keeps the library's message.
func TestColonInPlainValuePlaced(t *testing.T) {
	const head = "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  w:\n    behavior: w\n"
	checkPlaced(t, head, []struct{ body, want string }{
		{"    prelaunch: git commit -qam \"policy: be kind\"\n    triggers:\n      - dispatch: true\n",
			`ir.yml:6:39: YAML syntax error: a ": " inside the unquoted value of prelaunch, which YAML reads as a key (quote the value: prelaunch: 'git commit -qam "policy: be kind"')`},
		{"    triggers:\n      - dispatch: true\n    prelaunch: echo it's:   # a comment: here\n",
			`ir.yml:8:25: YAML syntax error: a ":" ending the unquoted value of prelaunch, which YAML reads as a key (quote the value: prelaunch: 'echo it''s:')`},
		{"    triggers:\n      - dispatch: true\n    prelaunch: " + strings.Repeat("x", 100) + ": y\n",
			`ir.yml:8:116: YAML syntax error: a ": " inside the unquoted value of prelaunch, which YAML reads as a key (quote the value: put it in single quotes, writing a ' inside as '')`},
		{"    triggers:\n      - dispatch: true\n    prelaunch: a\n      b: c\n",
			"ir.yml:9:7: YAML syntax error: mapping values are not allowed in this context"},
	})
}

// checkPlaced checks that each body after head fails to load with one error starting with want.
func checkPlaced(t *testing.T, head string, cases []struct{ body, want string }) {
	t.Helper()
	for _, c := range cases {
		// The fast parser leaves every syntax error to yaml.v3, whose errors are placed here.
		if _, ok := fastyaml.Parse([]byte(head + c.body)); ok {
			t.Errorf("fastyaml parsed a document yaml.v3 refuses:\n%s", c.body)
		}
		dir := writeProfile(t, map[string]string{"ir.yml": head + c.body, "skills/w/SKILL.md": "# w\n"})
		_, diags, err := Check(dir)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.ReplaceAll(diags.String(), filepath.Join(dir, "ir.yml"), "ir.yml")
		if !strings.HasPrefix(got, c.want) || diags.Errors() != 1 {
			t.Errorf("%s\ngot  %s\nwant %s…", c.body, got, c.want)
		}
	}
}
