package effect

import (
	"strings"
	"testing"
)

// TestElicitationFits: a resolution is checked against the kind of elicitation the ask carries
// before anything is recorded; a plain ask takes any verb.
func TestElicitationFits(t *testing.T) {
	sel := &Elicitation{Kind: "select", Options: []string{"api", "ui"}}
	for _, c := range []struct {
		el         *Elicitation
		verb, note string
		refused    string // "" when it fits
	}{
		{nil, "approve", "", ""},
		{&Elicitation{Kind: "confirm"}, "approve", "", ""},
		{&Elicitation{Kind: "confirm"}, "reject", "not now", ""},
		{&Elicitation{Kind: "confirm"}, "answer", "Yes", ""},
		{&Elicitation{Kind: "confirm"}, "answer", "maybe", "a yes/no question"},
		{sel, "answer", "UI", ""},
		{sel, "answer", "web", `"web" is not one of the options: api, ui`},
		{sel, "approve", "", "wants one of its options"},
		{sel, "reject", "wrong report", ""},
		{&Elicitation{Kind: "input"}, "answer", "team-api", ""},
		{&Elicitation{Kind: "input"}, "approve", "", "wants your text"},
	} {
		err := c.el.fits(c.verb, c.note)
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%+v %s %q: refused: %v", c.el, c.verb, c.note, err)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%+v %s %q: %v, want it refused saying %q", c.el, c.verb, c.note, err, c.refused)
		}
	}
}

// TestElicitationMarker: the marker carries the kind and a select's options, and reads back;
// an ask marker without them (every ask before this) still reads as a plain ask.
func TestElicitationMarker(t *testing.T) {
	el := &Elicitation{Kind: "select", Options: []string{"api", "ui team", "é"}}
	line := "<!-- autonomy:ask actor=triage token=0123456789abcdef0123456789abcdef at=2026-11-25T10:00:00Z run=42" + el.marker() + " -->"
	m := askRe().FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("the marker does not parse: %s", line)
	}
	got := parseElicitation(m[5], m[6])
	if got == nil || got.Kind != "select" || strings.Join(got.Options, "|") != "api|ui team|é" || m[4] != "42" {
		t.Errorf("read back %+v run %q from %s", got, m[4], line)
	}
	plain := askRe().FindStringSubmatch("<!-- autonomy:ask actor=maintainer token=0123456789abcdef0123456789abcdef at=2026-11-25T10:00:00Z run=42 -->")
	if plain == nil || parseElicitation(plain[5], plain[6]) != nil || plain[4] != "42" {
		t.Errorf("a plain ask: %q", plain)
	}
}

// TestCommandNote: the answer is the text after the token of the maintainer's own command, the
// lines after it included; another verb or token is not the command.
func TestCommandNote(t *testing.T) {
	tok := "0123456789abcdef0123456789abcdef"
	for body, want := range map[string]string{
		"/agent answer " + tok + " api":              "api",
		"/AGENT Answer " + tok + "   ui  \r\nthanks": "ui\nthanks",
		"/agent answer " + tok + "\nthe second line": "the second line",
		"/agent reject " + tok + " wrong report":     "!",
		"/agent answer 0123 api":                     "!",
		"please /agent answer " + tok + " api":       "!",
		// Only what the control job obeys (and ghwrite refuses to post): a space or tab after
		// /agent, not any Unicode space.
		"/agent\u00a0answer " + tok + " api": "!",
		"/agent\u2003answer " + tok + " api": "!",
		"/agent\u0085answer " + tok + " api": "!",
		"/agent\tanswer " + tok + " api":     "api",
	} {
		got, ok := CommandNote(body, "answer", tok)
		if want == "!" {
			if ok {
				t.Errorf("%q read as the answer command (%q)", body, got)
			}
			continue
		}
		if !ok || got != strings.TrimSpace(want) {
			t.Errorf("%q: %q %v, want %q", body, got, ok, want)
		}
	}
}
