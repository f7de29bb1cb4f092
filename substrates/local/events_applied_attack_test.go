//go:build unix

package local

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/internal/ghwrite"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/internal/tools"
)

// These tests hold the records of the runner's writes (events_applied.go) against an attack on
// them: each comment says what the attack did when it succeeded; the test asserts it no longer does.

// failPage fails requests whose URL contains match while fail is set.
type failPage struct {
	base  http.RoundTripper
	mu    sync.Mutex
	match string
	fail  int // how many more to fail
}

func (f *failPage) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	hit := f.fail > 0 && strings.Contains(req.URL.String(), f.match)
	if hit {
		f.fail--
	}
	f.mu.Unlock()
	if hit {
		return nil, errors.New("injected: connection reset")
	}
	return f.base.RoundTrip(req)
}

func (f *failPage) set(match string, n int) { f.mu.Lock(); f.match, f.fail = match, n; f.mu.Unlock() }

// The attack: a poll error on page 2 leaves page 1's ETag: the next polls get 304 and count as complete
// reads, so the record of the session's comment (on page 2, never read) is dropped; once a new
// comment changes page 1, the session's comment is read and fires triage as the operator's.
func TestAFailedReadLeavesNoETagToPassOver(t *testing.T) {
	gh, _, r, _, g, c := appliedSourceOn(t)
	fp := &failPage{base: gh.Client().Transport}
	es, err := r.NewEventSource(EventOptions{Token: ghSecret, BaseURL: gh.URL, HTTPClient: &http.Client{Transport: fp}})
	if err != nil {
		t.Fatal(err)
	}
	poll(t, es)
	if _, err := g.repo.Comment(context.Background(), &tools.CommentInput{Item: "1", Body: "Session note."}, false); err != nil {
		t.Fatal(err)
	}
	for range 100 { // an outsider's comments: fire nothing, push the session's to page 2
		if _, err := gh.AddComment(1, "mallory", "spam"); err != nil {
			t.Fatal(err)
		}
	}
	c.advance(appliedGrace + time.Second)
	fp.set("issues/comments?", 0)
	fp.set("page=2", 1)
	if _, err := es.Poll(context.Background()); err == nil {
		t.Fatal("want the injected error")
	}
	poll(t, es) // 304 on page 1: a "complete" read notes the record
	poll(t, es) // drops it
	if _, err := gh.AddComment(1, "carol", "hello"); err != nil {
		t.Fatal(err)
	}
	rep := poll(t, es)
	n := 0
	for _, s := range rep.Fired {
		if s.Actor == "triage" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("triage fired %d times, want 1 (carol's only): the session's comment fired as the operator's (%d ignored, none as the runner's)", n, len(rep.Ignored))
	}
	settle(t, r)
}

// The attack: the label events of an issue the session opened with labels are named by the issue's
// title and body as the issue events list shows them now: a title edited (by a person) before
// serve reads them unnames them, and the operator's label fires the labeler.
func TestANewIssuesLabelIsNamedByItsNumber(t *testing.T) {
	_, _, r, es, g, _ := appliedSourceOn(t)
	poll(t, es)
	if _, err := g.repo.CreateIssue(context.Background(), &tools.NewItem{Title: "Follow-up", Body: "More.", Labels: []string{"bug"}}, false); err != nil {
		t.Fatal(err)
	}
	by := ""
	err := r.Store.Tx(context.Background(), func(tx *store.Tx) error {
		var err error
		by, err = appliedBy(tx, ghEvent{ID: 900_001, Name: "issues", Action: "labeled", Ref: "2", Login: "acme", Role: "OWNER",
			Title: "Follow-up: typo fixed", Body: "More.", Label: "bug"}, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if by != "1-talk" {
		t.Errorf("the session's label on the issue it opened (#2, title since edited) is not named as its write: it fires as the operator's")
	}
}

// The attack: a settled record is only noted, not dropped, by the first read that starts past the
// grace: after serve was down (restart) or a failed read, a person's same label made long after
// the session's write (here an hour) is swallowed.
func TestAPersonsLabelAnHourLaterFires(t *testing.T) {
	gh, _, r, es, g, c := appliedSourceOn(t)
	poll(t, es)
	done, err := g.record(context.Background(), ghwrite.Write{Kind: "labeled", Item: 1, Label: "status: ready"})
	if err != nil {
		t.Fatal(err)
	}
	done(ghwrite.Ended{ID: 0, Answered: true}) // answered; its event never listed (say the label was there, then removed by hand)
	poll(t, es)
	// serve stops; an hour later a maintainer labels #1; serve starts again.
	c.advance(time.Hour)
	if err := gh.Label(1, "carol", "status: ready"); err != nil {
		t.Fatal(err)
	}
	es2, err := r.NewEventSource(EventOptions{Token: ghSecret, BaseURL: gh.URL, HTTPClient: gh.Client()})
	if err != nil {
		t.Fatal(err)
	}
	rep := poll(t, es2)
	if got := firedActors(rep); len(got) != 1 || got[0] != "labeler" {
		t.Errorf("a maintainer's label an hour after the session's fired %v (ignored %q), want labeler", got, rep.Ignored)
	}
	settle(t, r)
}

// The attack: the same with serve running and one failed read of the issue events (a 502).
func TestAPersonsLabelAfterAFailedReadFires(t *testing.T) {
	gh, _, r, _, g, c := appliedSourceOn(t)
	fp := &failPage{base: gh.Client().Transport}
	es, err := r.NewEventSource(EventOptions{Token: ghSecret, BaseURL: gh.URL, HTTPClient: &http.Client{Transport: fp}})
	if err != nil {
		t.Fatal(err)
	}
	poll(t, es)
	done, err := g.record(context.Background(), ghwrite.Write{Kind: "labeled", Item: 1, Label: "status: ready"})
	if err != nil {
		t.Fatal(err)
	}
	done(ghwrite.Ended{ID: 0, Answered: true})
	c.advance(10 * time.Minute)
	fp.set("issues/events", 1)
	if _, err := es.Poll(context.Background()); err == nil {
		t.Fatal("want the injected error")
	}
	c.advance(time.Minute)
	if err := gh.Label(1, "carol", "status: ready"); err != nil {
		t.Fatal(err)
	}
	rep := poll(t, es)
	if got := firedActors(rep); len(got) != 1 || got[0] != "labeler" {
		t.Errorf("a maintainer's label 11 minutes after the session's fired %v (ignored %q), want labeler", got, rep.Ignored)
	}
	settle(t, r)
}

// The attack: the runner's clock stepped back (it ran a day ahead when the write settled): the record
// stands a day, not two minutes, past complete reads, and swallows a person's same label.
func TestAClockSteppedBackKeepsNoRecordLonger(t *testing.T) {
	gh, _, r, es, g, c := appliedSourceOn(t)
	poll(t, es)
	c.advance(24 * time.Hour)
	done, err := g.record(context.Background(), ghwrite.Write{Kind: "labeled", Item: 1, Label: "status: ready"})
	if err != nil {
		t.Fatal(err)
	}
	done(ghwrite.Ended{ID: 0, Answered: true})
	c.advance(-24 * time.Hour) // NTP corrects the clock
	pastGrace(t, c, es)
	c.advance(10 * time.Minute)
	poll(t, es)
	poll(t, es)
	if err := gh.Label(1, "carol", "status: ready"); err != nil {
		t.Fatal(err)
	}
	rep := poll(t, es)
	if got := firedActors(rep); len(got) != 1 || got[0] != "labeler" {
		t.Errorf("a person's label 12 minutes after fired %v (ignored %q), want labeler; rows %q", got, rep.Ignored, appliedRows(t, r))
	}
	settle(t, r)
}

// The attack: without serve (sessions run by tick only, event triggers declared), nothing pruned:
// the meta table held every write's record for ever. Now each write drops the records settled
// more than appliedKeep before it.
func TestRecordsAreDroppedAWeekOnWithoutServe(t *testing.T) {
	_, _, r, _, g, c := appliedSourceOn(t)
	for i := range 20 {
		if _, err := g.repo.Comment(context.Background(), &tools.CommentInput{Item: "1", Body: "n" + string(rune('a'+i))}, false); err != nil {
			t.Fatal(err)
		}
	}
	c.advance(appliedKeep + time.Hour)
	if _, err := g.repo.Comment(context.Background(), &tools.CommentInput{Item: "1", Body: "a week on"}, false); err != nil {
		t.Fatal(err)
	}
	if rows := appliedRows(t, r); len(rows) != 1 {
		t.Errorf("%d records a week after 20 writes ended, with no serve to read them, and one write since: %q, want the last write's only", len(rows), rows)
	}
}

// The attack: hand-edited rows: none panics; a row whose time is MinInt64 (now-at overflows) stands
// for ever and swallows a person's label.
func TestMalformedRecordsAreDroppedWithoutPanic(t *testing.T) {
	gh, _, r, es, _, c := appliedSourceOn(t)
	poll(t, es)
	lab := appliedKey("labeled", itemKey(1), "status: ready")
	rows := map[string]string{
		"github-applied:":            "x",
		"github-applied:nocolon":     issueEventsCursorKey + " settled s 0 0",
		"github-applied:a:b":         "",
		"github-applied::":           issueEventsCursorKey + " settled s 0 0 extra",
		"github-applied:z:1":         issueEventsCursorKey + " settled \x00 99999999999999999999 0",
		lab + ":ffff":                issueEventsCursorKey + " settled gone 0 -9223372036854775808",
		"github-applied:q:" + "\xff": commentCursorKey + " sent \xff 0 0",
	}
	err := r.Store.Tx(context.Background(), func(tx *store.Tx) error {
		for k, v := range rows {
			if err := tx.SetMeta(k, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pastGrace(t, c, es)
	c.advance(time.Hour)
	poll(t, es)
	poll(t, es)
	if err := gh.Label(1, "carol", "status: ready"); err != nil {
		t.Fatal(err)
	}
	rep := poll(t, es)
	if got := firedActors(rep); len(got) != 1 {
		t.Errorf("a person's label fired %v (ignored %q); rows left %q", got, rep.Ignored, appliedRows(t, r))
	}
	settle(t, r)
}

// The attack: a write made while the installation polled no comments is not recorded; but the comment
// cursor of an earlier installation that did stays in the store: once issue_comment is declared
// again, serve reads on from that cursor and the session's comment fires triage as the operator.
func TestAWriteWhileUnpolledIsRecordedWhereAListWasRead(t *testing.T) {
	gh, _, r, es, g, _ := appliedSourceOn(t)
	poll(t, es) // comment cursor set
	f := appliedFleet
	f.yml = strings.Replace(f.yml, "      - event: issue_comment\n        config: { plain_comments: true }\n", "      - dispatch: true\n", 1)
	without := ghRunner(t, installFleet(t, f, false), gh, Options{})
	with := r.In
	r.In = without.In // recompiled without issue_comment
	if _, err := g.repo.Comment(context.Background(), &tools.CommentInput{Item: "1", Body: "Done, see #1."}, false); err != nil {
		t.Fatal(err)
	}
	r.In = with // recompiled with it again
	rep := poll(t, es)
	if len(rep.Fired) > 0 {
		t.Errorf("the session's comment, made while comments were not polled, fired %v as the operator's", firedActors(rep))
	}
	settle(t, r)
}

// The attack: while a session's comment is in flight (no id yet), a person's same comment made just
// before it takes its record: the person's is swallowed and the session's fires as the operator.
func TestAPersonsCommentIsNeverTheRunnersWrite(t *testing.T) {
	gh, _, r, es, g, _ := appliedSourceOn(t)
	poll(t, es)
	done, err := g.record(context.Background(), ghwrite.Write{Kind: "comment", Item: 1, Body: "LGTM"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gh.AddComment(1, "carol", "LGTM"); err != nil {
		t.Fatal(err)
	}
	id, err := gh.AddComment(1, "acme", "LGTM") // the session's, made; its answer still on its way
	if err != nil {
		t.Fatal(err)
	}
	rep := poll(t, es)
	done(ghwrite.Ended{ID: id, Answered: true})
	if len(rep.Ignored) != 1 || !strings.Contains(rep.Ignored[0], "by acme") {
		t.Errorf("skipped %q: want the operator-token comment skipped, carol's fired", rep.Ignored)
	}
	settle(t, r)
}

// The attack: the runner's clock well behind GitHub's (a laptop's after sleep): GitHub's time of
// the session's own write looked later than its settling by more than the grace, so the write
// fired actors as the operator's. The skew is read from GitHub's Date header: the session's writes
// fire nothing with the runner 3 minutes behind or ahead, and a person's same label an hour later
// still fires.
func TestTheRunnersWritesFireNothingWhateverTheClocksSkew(t *testing.T) {
	for _, skew := range []time.Duration{3 * time.Minute, -3 * time.Minute, 2 * time.Hour} {
		t.Run(skew.String(), func(t *testing.T) {
			c := &clock{}
			gh, r, es, g := clockedRig(t, c, func() time.Duration { return skew })
			poll(t, es)
			writeOn(t, g, "Found it.", "ready")
			if rep := poll(t, es); len(rep.Fired) > 0 {
				t.Errorf("the runner's own writes fired %v", firedActors(rep))
			}
			// A label write answered whose event never came (the label was there, then removed by
			// hand): a maintainer's same label an hour on is theirs.
			done, err := g.record(context.Background(), ghwrite.Write{Kind: "labeled", Item: 1, Label: "urgent"})
			if err != nil {
				t.Fatal(err)
			}
			done(ghwrite.Ended{ID: 0, Answered: true})
			poll(t, es)
			c.advance(time.Hour)
			// The operator's own label (the token's user, as the runner's writes are): only the
			// time tells it from the write's.
			if err := gh.Label(1, "acme", "urgent"); err != nil {
				t.Fatal(err)
			}
			if got := firedActors(poll(t, es)); len(got) != 1 || got[0] != "labeler" {
				t.Errorf("the operator's label an hour on fired %v, want labeler", got)
			}
			settle(t, r)
		})
	}
}

// The runner's clock stepped between a write and the read of its events (NTP corrects a laptop's
// clock ten minutes behind GitHub's after a sleep): the session's own writes still fire nothing,
// and the operator's same label an hour on still fires.
func TestTheRunnersWritesFireNothingWhenItsClockSteps(t *testing.T) {
	for _, step := range []time.Duration{10 * time.Minute, -10 * time.Minute} {
		t.Run(step.String(), func(t *testing.T) {
			c := &clock{}
			var off atomic.Int64 // GitHub's clock ahead of the runner's
			off.Store(int64(step))
			gh, r, es, g := clockedRig(t, c, func() time.Duration { return time.Duration(off.Load()) })
			poll(t, es)
			writeOn(t, g, "Found it.", "ready")
			c.advance(step) // the runner's clock is set to GitHub's
			off.Store(0)
			if rep := poll(t, es); len(rep.Fired) > 0 {
				t.Errorf("the runner's own writes fired %v after its clock stepped", firedActors(rep))
			}
			c.advance(time.Hour)
			if err := gh.Label(1, "acme", "urgent"); err != nil {
				t.Fatal(err)
			}
			if got := firedActors(poll(t, es)); len(got) != 1 || got[0] != "labeler" {
				t.Errorf("the operator's label an hour on fired %v, want labeler", got)
			}
			settle(t, r)
		})
	}
}

// clockedRig is a fake GitHub of one issue whose clock is the runner's, c (set to a fixed
// morning), ahead by ahead(); the runner installed with appliedFleet, its event source, and the
// applier of session 1-talk. carol has write access.
func clockedRig(t *testing.T, c *clock, ahead func() time.Duration) (*ghfake.Server, *Runner, *EventSource, *githubApplier) {
	t.Helper()
	c.Set("2026-03-02T10:00:00Z")
	gh, err := ghfake.New(ghfake.Options{Owner: "acme", Repo: "app", Token: ghSecret, WritesAs: "acme",
		Collaborators: map[string]string{"carol": "write"}, Now: func() time.Time { return c.Now().Add(ahead()) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	gh.AddIssue("a bug", "")
	r := ghRunner(t, installFleet(t, appliedFleet, false), gh, Options{Now: c.Now})
	es, err := r.NewEventSource(EventOptions{Token: ghSecret, BaseURL: gh.URL, HTTPClient: gh.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return gh, r, es, r.newGitHubApplier(store.Session{ID: "1-talk", Actor: "talker"})
}
