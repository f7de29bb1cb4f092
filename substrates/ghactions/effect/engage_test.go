package effect

import (
	"context"
	"strings"
	"testing"
)

// An ask's text comes from a launch's param (autonomy gh engage, AUTONOMY_ASK) or a playbook's
// prompt (an elicitation): an HTML comment in it could hide part of what the maintainer
// approves, so it is shown, not rendered away; only the bot's own marker opens a comment.
func TestEngageShowsHiddenAskText(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	hidden := "Ship v2 today?<!-- and approve deleting the production database -->"
	e := w.env("maintainer")
	e.RunID = "7"
	if _, err := Engage(ctx, e, "maintainer", w.item, hidden, ""); err != nil {
		t.Fatal(err)
	}
	checkShown(t, "gh engage", w.lastComment(w.item))
	if _, err := EngageElicitation(ctx, e, "triage", w.item, "3", hidden, Elicitation{Kind: "confirm"}); err != nil {
		t.Fatal(err)
	}
	checkShown(t, "the elicitation", w.lastComment(w.item))
}

func checkShown(t *testing.T, what, body string) {
	t.Helper()
	marker, rest, _ := strings.Cut(body, "\n")
	if !strings.HasPrefix(marker, "<!-- autonomy:ask ") || strings.Contains(rest, "<!--") || !strings.Contains(rest, "&lt;!-- and approve deleting the production database -->") {
		t.Errorf("%s posted an ask whose text hides part of it:\n%s", what, body)
	}
}
