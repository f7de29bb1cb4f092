package local

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// An outsider edits a thousand of its old comments: since filters on updated_at, so they are
// all listed again; read oldest first they filled every page a poll reads, the cursor never
// moved, and a collaborator's command made after them never fired, with nothing said. Read
// newest first down to the cursor, the command fires on the next poll and the edits are not
// read.
func TestEditedOldCommentsDoNotStarveCommands(t *testing.T) {
	g := newEventRig(t)
	var ids []int64
	for i := range 1000 {
		id, err := g.gh.AddComment(g.issue, "mallory", fmt.Sprintf("spam %d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	g.comment(t, "mallory", "last old one")
	_, es := g.source(t)
	poll(t, es) // the first poll sets the cursor at the newest comment
	g.clock.advance(5)
	for _, id := range ids {
		if err := g.gh.EditComment(id, "edited"); err != nil {
			t.Fatal(err)
		}
	}
	g.comment(t, "carol", "/agent reviewer please review")
	rep := poll(t, es)
	if !slices.Equal(firedActors(rep), []string{"reviewer"}) {
		t.Errorf("after 1000 old comments were edited, carol's /agent reviewer fired %v (ignored %q), want reviewer", firedActors(rep), rep.Ignored)
	}
}

// More new comments than a poll reads (maxPages of 100) are reported, not passed over silently.
func TestCommentFloodIsReported(t *testing.T) {
	g := newEventRig(t)
	_, es := g.source(t)
	poll(t, es)
	g.clock.advance(5)
	for i := range maxPages*100 + 5 {
		if _, err := g.gh.AddComment(g.issue, "mallory", fmt.Sprintf("flood %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	rep := poll(t, es)
	if !slices.ContainsFunc(rep.Ignored, func(s string) bool { return strings.Contains(s, "more than 1000 new items") }) {
		t.Errorf("a poll that reached maxPages did not say so (%d lines ignored)", len(rep.Ignored))
	}
}
