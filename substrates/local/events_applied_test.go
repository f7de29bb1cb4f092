//go:build unix

package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/internal/ghwrite"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/internal/tools"
)

// appliedFleet, on codeHost github: talker comments, opens issues and moves them through the
// tools; triage fires on any plain comment, labeler on an issue opened, labeled or unlabeled.
var appliedFleet = fleet{yml: `schema: autonomy.ir.v1
targets: [local]
codeHost: github
actors:
  talker:
    behavior: scripts/wait.sh
    capabilities: [tasks:converse, tasks:author]
    triggers: [{ dispatch: true }]
  triage:
    behavior: scripts/quick.sh
    triggers:
      - event: issue_comment
        config: { plain_comments: true }
  labeler:
    behavior: scripts/quick.sh
    triggers:
      - event: issues
        config: { types: [opened, labeled, unlabeled] }
        params: { WHY: trigger.kind }
policy:
  box:
    taskStates: { ready: "status: ready" }
    local: { events: { repo: acme/app, poll_seconds: 10 } }
`, files: map[string]string{"scripts/wait.sh": ghHandsFleet.files["scripts/wait.sh"], "scripts/quick.sh": "#!/bin/sh\n" + scriptDone}}

// What a session's tools do on GitHub is sent with the operator's token, so GitHub records it as
// the operator's (an OWNER's comment, issue, labels): the event source fires nothing on it, and
// says why; the same comment and label from a person afterwards fire as ever.
func TestEventSourceSkipsTheRunnersOwnWrites(t *testing.T) {
	gh, err := ghfake.New(ghfake.Options{Owner: "acme", Repo: "app", Token: ghSecret, WritesAs: "acme", Collaborators: map[string]string{"carol": "write"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	issue := gh.OpenIssue("carol", "a bug", "")
	dir := installFleet(t, appliedFleet, false)
	r := ghRunner(t, dir, gh, Options{})
	es, err := r.NewEventSource(EventOptions{Token: ghSecret, BaseURL: gh.URL, HTTPClient: gh.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if rep := poll(t, es); !rep.First {
		t.Fatalf("first poll: %+v", rep)
	}
	talker := launch(t, r, LaunchRequest{Actor: "talker"})
	defer func() { _ = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); waitEnded(t, r, talker.ID) }()
	cs := sessionTools(t, dir, talker.ID)
	for _, c := range [][2]string{
		{"comment", `{"item":"1","body":"Found it."}`},
		{"set_state", `{"item":"1","state":"ready"}`},
		{"set_state", `{"item":"1","state":"working"}`},
		{"create_item", `{"title":"Follow-up","body":"More.","labels":["bug","bug"]}`},
	} {
		if out, isErr := callTool(t, cs, c[0], c[1]); isErr {
			t.Fatalf("%s: %s", c[0], out)
		}
	}
	is, _ := gh.Issue(issue)
	if len(is.Comments) != 1 || !slices.Equal(is.Labels, []string{"working"}) {
		t.Fatalf("#%d: comments %q labels %q", issue, is.Comments, is.Labels)
	}
	rep := poll(t, es)
	if len(rep.Fired) > 0 {
		t.Errorf("the session's own comment, issue and labels, sent as the operator, fired %v", firedActors(rep))
	}
	// The comment, #2 opened, its label bug, status: ready added then removed, working added.
	skipped := 0
	for _, why := range rep.Ignored {
		if strings.Contains(why, "the runner applied it for session "+talker.ID) && strings.Contains(why, "by acme") {
			skipped++
		}
	}
	if skipped != 6 {
		t.Errorf("%d events skipped as the runner's, want 6: %q", skipped, rep.Ignored)
	}

	// Every record was used up, dropped (a label named twice at creation makes one event, one
	// record).
	if recs := appliedRows(t, r); len(recs) != 0 {
		t.Errorf("records left: %q, want every one used up", recs)
	}
	// A person's same comment and same label fire: the records were used up.
	if _, err := gh.AddComment(issue, "carol", "Found it."); err != nil {
		t.Fatal(err)
	}
	if err := gh.Label(issue, "acme", "status: ready"); err != nil {
		t.Fatal(err)
	}
	rep = poll(t, es)
	got := firedActors(rep)
	slices.Sort(got)
	if !slices.Equal(got, []string{"labeler", "triage"}) {
		t.Errorf("a person's comment and label fired %v (ignored %q), want labeler and triage", got, rep.Ignored)
	}
	settle(t, r, "talker")
	evs, err := r.Store.Events(context.Background(), talker.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(evs, func(e store.Event) bool { return e.Kind == "refused" && strings.Contains(e.Message, "fires nothing") }) {
		t.Errorf("the session's log does not say its effects fired nothing: %+v", evs)
	}
}

// The record is made before the request is sent: a poll that sees the comment on GitHub before
// the supervisor has learnt its id skips it all the same. A write GitHub refused leaves no record
// behind to swallow a person's event.
func TestEventSourceSkipsAWriteInFlight(t *testing.T) {
	gh, err := ghfake.New(ghfake.Options{Owner: "acme", Repo: "app", Token: ghSecret, WritesAs: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	issue := gh.AddIssue("a bug", "")
	dir := installFleet(t, appliedFleet, false)
	r := ghRunner(t, dir, gh, Options{})
	es, err := r.NewEventSource(EventOptions{Token: ghSecret, BaseURL: gh.URL, HTTPClient: gh.Client()})
	if err != nil {
		t.Fatal(err)
	}
	poll(t, es)
	ctx := context.Background()
	g := r.newGitHubApplier(store.Session{ID: "1-talk", Actor: "talker"})
	done, err := g.record(ctx, ghwrite.Write{Kind: "comment", Item: issue, Body: "Racing."})
	if err != nil {
		t.Fatal(err)
	}
	id, err := gh.AddComment(issue, "acme", "Racing.") // GitHub made it; its answer is still on its way
	if err != nil {
		t.Fatal(err)
	}
	if rep := poll(t, es); len(rep.Fired) > 0 || len(rep.Ignored) != 1 || !strings.Contains(rep.Ignored[0], "session 1-talk") {
		t.Errorf("a comment in flight fired %v (ignored %q), want it skipped as the runner's", firedActors(rep), rep.Ignored)
	}
	done(ghwrite.Ended{ID: id, Answered: true})

	refused, err := g.record(ctx, ghwrite.Write{Kind: "labeled", Item: issue, Label: "bug"})
	if err != nil {
		t.Fatal(err)
	}
	refused(ghwrite.Ended{Err: errors.New("422 Validation Failed"), Answered: true})
	if err := gh.Label(issue, "acme", "bug"); err != nil {
		t.Fatal(err)
	}
	if rep := poll(t, es); !slices.Equal(firedActors(rep), []string{"labeler"}) {
		t.Errorf("a person's label after a refused write of it fired %v (ignored %q), want labeler", firedActors(rep), rep.Ignored)
	}
	settle(t, r)
}

// A write whose events the installation never polls (no actor declares issue_comment: comments
// are never read) records nothing: a record no event uses up would stand for a person's same
// comment once a recompiled installation polls comments.
func TestWriteOfAnUnpolledKindRecordsNothing(t *testing.T) {
	gh, err := ghfake.New(ghfake.Options{Owner: "acme", Repo: "app", Token: ghSecret, WritesAs: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	issue := gh.AddIssue("a bug", "")
	f := appliedFleet
	f.yml = strings.Replace(f.yml, "      - event: issue_comment\n        config: { plain_comments: true }\n", "      - dispatch: true\n", 1)
	dir := installFleet(t, f, false)
	r := ghRunner(t, dir, gh, Options{})
	ctx := context.Background()
	g := r.newGitHubApplier(store.Session{ID: "1-talk", Actor: "talker"})
	for _, w := range []ghwrite.Write{{Kind: "comment", Item: issue, Body: "LGTM"}, {Kind: "labeled", Item: issue, Label: "bug"}} {
		done, err := g.record(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		done(ghwrite.Ended{ID: 7, Answered: true})
	}
	var pending []string
	for _, w := range []ghwrite.Write{{Kind: "comment", Item: issue, Body: "LGTM"}, {Kind: "labeled", Item: issue, Label: "bug"}} {
		for _, k := range writeKeys(w) {
			for _, row := range appliedRows(t, r) {
				if strings.HasPrefix(row, k+":") {
					pending = append(pending, w.Kind+"="+row[strings.IndexByte(row, '=')+1:])
				}
			}
		}
	}
	if len(pending) == 1 && strings.Count(pending[0], " ") == 5 {
		f := strings.Fields(pending[0])
		pending[0] = strings.Join(f[:4], " ") // without the times it was settled, on each clock
	}
	if !slices.Equal(pending, []string{"labeled=" + issueEventsCursorKey + " settled 1-talk 0"}) {
		t.Errorf("records %q, want only the label's (issues are polled, comments are not)", pending)
	}
}

// appliedRows are the store's records of the runner's writes, key=value, read in a transaction of
// their own.
func appliedRows(t *testing.T, r *Runner) []string {
	t.Helper()
	var rows []string
	err := r.Store.Tx(context.Background(), func(tx *store.Tx) error {
		keys, values, err := tx.MetaPrefix(appliedPrefix)
		for i := range keys {
			rows = append(rows, keys[i]+"="+values[i])
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// appliedSource is a GitHub fake with issue #1, where carol may write, the appliedFleet installed
// against it (in dir), its event source (not polled yet) and the applier of a session 1-talk, which is not
// in the store: as a session ended, nothing of it is on its way but what it has answered.
func appliedSource(t *testing.T) (gh *ghfake.Server, dir string, r *Runner, es *EventSource, g *githubApplier) {
	gh, dir, r, es, g, _ = appliedSourceOn(t)
	return gh, dir, r, es, g
}

// appliedSourceOn is appliedSource with the runner and the fake on one clock the test moves.
func appliedSourceOn(t *testing.T) (gh *ghfake.Server, dir string, r *Runner, es *EventSource, g *githubApplier, c *clock) {
	t.Helper()
	c = &clock{}
	c.Set("2026-03-02T10:00:00Z")
	gh, err := ghfake.New(ghfake.Options{Owner: "acme", Repo: "app", Token: ghSecret, WritesAs: "acme", Collaborators: map[string]string{"carol": "write"}, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	gh.AddIssue("a bug", "")
	dir = installFleet(t, appliedFleet, false)
	r = ghRunner(t, dir, gh, Options{Now: c.Now})
	if es, err = r.NewEventSource(EventOptions{Token: ghSecret, BaseURL: gh.URL, HTTPClient: gh.Client()}); err != nil {
		t.Fatal(err)
	}
	return gh, dir, r, es, r.newGitHubApplier(store.Session{ID: "1-talk", Actor: "talker"}), c
}

// pastGrace moves c past appliedGrace and polls twice: the first read notes the settled records,
// the second drops those its list's events did not use up.
func pastGrace(t *testing.T, c *clock, es *EventSource) {
	t.Helper()
	c.advance(appliedGrace + time.Second)
	poll(t, es)
	poll(t, es)
}

// writeOn has g comment body on #1 and move it to state, through the tools' GitHub writes.
func writeOn(t *testing.T, g *githubApplier, body, state string) {
	t.Helper()
	ctx := context.Background()
	if _, err := g.repo.Comment(ctx, &tools.CommentInput{Item: "1", Body: body}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := g.repo.SetState(ctx, &tools.StateChange{Item: "1", State: state}, false); err != nil {
		t.Fatal(err)
	}
}

// A session's writes made before serve's first poll, which starts past their events and never
// reads them, leave no record behind: a person's same comment and same label afterwards fire.
func TestAWriteBeforeTheFirstPollSwallowsNoPersonsEvent(t *testing.T) {
	gh, _, r, es, g, c := appliedSourceOn(t)
	writeOn(t, g, "LGTM", "ready")
	writeOn(t, g, "LGTM", "working") // status: ready added, then removed
	if rep := poll(t, es); !rep.First || len(rep.Fired) > 0 {
		t.Fatalf("first poll: %+v", rep)
	}
	pastGrace(t, c, es)
	if _, err := gh.AddComment(1, "carol", "LGTM"); err != nil {
		t.Fatal(err)
	}
	if err := gh.Label(1, "acme", "status: ready"); err != nil {
		t.Fatal(err)
	}
	rep := poll(t, es)
	got := firedActors(rep)
	slices.Sort(got)
	if !slices.Equal(got, []string{"labeler", "triage"}) {
		t.Errorf("a person's comment and label after the session's same ones fired %v (ignored %q), want labeler and triage", got, rep.Ignored)
	}
	if rows := appliedRows(t, r); len(rows) != 0 {
		t.Errorf("records left of writes the source passed over: %q", rows)
	}
	settle(t, r)
}

// The records of the runner's writes do not pile up: each is dropped once its event is read, or
// once a read that starts after its write has ended comes to the list's top without it.
func TestRecordsOfTheRunnersWritesArePruned(t *testing.T) {
	_, _, r, es, g, c := appliedSourceOn(t)
	states := []string{"ready", "working"}
	for i := range 3 {
		writeOn(t, g, fmt.Sprintf("note %d", i), states[i%2])
	}
	poll(t, es)
	for i := 3; i < 23; i++ {
		writeOn(t, g, fmt.Sprintf("note %d", i), states[i%2])
		if rep := poll(t, es); len(rep.Fired) > 0 {
			t.Fatalf("the session's writes fired %v", firedActors(rep))
		}
	}
	pastGrace(t, c, es)
	if rows := appliedRows(t, r); len(rows) != 0 {
		t.Errorf("%d records left after 23 comments and their label changes, all read or passed over: %q", len(rows), rows)
	}
}

// A write in flight keeps its record however many polls pass before its event comes, while its
// session runs; once the session has ended, nothing of it is on its way: the record of a write
// never answered (the supervisor died) is dropped and swallows no person's same comment.
func TestAnUnansweredWritesRecordLastsWhileItsSessionRuns(t *testing.T) {
	gh, dir, r, es, _, c := appliedSourceOn(t)
	poll(t, es)
	talker := launch(t, r, LaunchRequest{Actor: "talker"})
	g := r.newGitHubApplier(talker)
	ctx := context.Background()
	if _, err := g.record(ctx, ghwrite.Write{Kind: "comment", Item: 1, Body: "Slow."}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		poll(t, es)
	}
	if _, err := gh.AddComment(1, "acme", "Slow."); err != nil {
		t.Fatal(err)
	}
	if rep := poll(t, es); len(rep.Fired) > 0 || len(rep.Ignored) != 1 || !strings.Contains(rep.Ignored[0], "session "+talker.ID) {
		t.Errorf("a write in flight over three polls fired %v (ignored %q), want it skipped as the runner's", firedActors(rep), rep.Ignored)
	}

	if _, err := g.record(ctx, ghwrite.Write{Kind: "comment", Item: 1, Body: "Lost."}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitEnded(t, r, talker.ID)
	poll(t, es) // settles the ended session's record
	pastGrace(t, c, es)
	if _, err := gh.AddComment(1, "carol", "Lost."); err != nil {
		t.Fatal(err)
	}
	if rep := poll(t, es); !slices.Equal(firedActors(rep), []string{"triage"}) {
		t.Errorf("a person's comment like an ended session's unanswered write fired %v (ignored %q), want triage", firedActors(rep), rep.Ignored)
	}
	settle(t, r)
}

// A write GitHub answered names the comment of that id: a person's same comment, made just before
// it and read in the same poll, fires, and the session's fires nothing.
func TestAnAnsweredWriteNamesItsOwnComment(t *testing.T) {
	gh, _, r, es, g := appliedSource(t)
	poll(t, es)
	if _, err := gh.AddComment(1, "carol", "Same."); err != nil {
		t.Fatal(err)
	}
	if _, err := g.repo.Comment(context.Background(), &tools.CommentInput{Item: "1", Body: "Same."}, false); err != nil {
		t.Fatal(err)
	}
	rep := poll(t, es)
	if !slices.Equal(firedActors(rep), []string{"triage"}) || len(rep.Ignored) != 1 || !strings.Contains(rep.Ignored[0], "by acme") {
		t.Errorf("a person's comment, then the session's same one, fired %v (ignored %q); want triage on the person's, the session's skipped", firedActors(rep), rep.Ignored)
	}
	settle(t, r)
}

// GitHub answers a write before each of its lists shows it (they are read from replicas): a
// settled record whose event is listed late, after complete reads of its list, still names it
// within appliedGrace, so the session's label fires nothing; past the grace, a person's same
// label fires.
func TestASettledWriteWaitsOutGitHubsListingLag(t *testing.T) {
	gh, _, r, es, g, c := appliedSourceOn(t)
	poll(t, es)
	done, err := g.record(context.Background(), ghwrite.Write{Kind: "labeled", Item: 1, Label: "status: ready"})
	if err != nil {
		t.Fatal(err)
	}
	done(ghwrite.Ended{ID: 0, Answered: true}) // GitHub answered; its issue events do not show the label yet
	for range 3 {
		c.advance(20 * time.Second)
		poll(t, es)
	}
	if err := gh.Label(1, "acme", "status: ready"); err != nil { // now listed
		t.Fatal(err)
	}
	if rep := poll(t, es); len(rep.Fired) > 0 || len(rep.Ignored) != 1 || !strings.Contains(rep.Ignored[0], "session 1-talk") {
		t.Fatalf("the session's label listed a minute after GitHub answered fired %v (ignored %q), want it skipped as the runner's", firedActors(rep), rep.Ignored)
	}
	// A label whose event GitHub never lists (say it was there already): past the grace, its
	// record stands for nothing, and a person's same label fires.
	done, err = g.record(context.Background(), ghwrite.Write{Kind: "labeled", Item: 1, Label: "status: working"})
	if err != nil {
		t.Fatal(err)
	}
	done(ghwrite.Ended{ID: 0, Answered: true})
	pastGrace(t, c, es)
	if err := gh.Label(1, "carol", "status: working"); err != nil {
		t.Fatal(err)
	}
	if rep := poll(t, es); !slices.Equal(firedActors(rep), []string{"labeler"}) {
		t.Errorf("a person's label past the grace fired %v (ignored %q), want labeler", firedActors(rep), rep.Ignored)
	}
	if rows := appliedRows(t, r); len(rows) != 0 {
		t.Errorf("records left past the grace: %q", rows)
	}
}
