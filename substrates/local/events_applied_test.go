//go:build unix

package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/internal/ghwrite"
	"github.com/autonomyhq/autonomy/internal/store"
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

	// Every record was used up (a label named twice at creation makes one event, one record).
	for _, k := range []string{appliedKey("labeled", "new", "Follow-up", "More.", "bug"), appliedKey("comment", "#1", "Found it.")} {
		var v string
		if err := r.Store.Tx(context.Background(), func(tx *store.Tx) (err error) { v, _, err = tx.Meta(k); return err }); err != nil || v != "0 "+talker.ID {
			t.Errorf("record %s: %q, %v; want it used up", k, v, err)
		}
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
	done(id, nil, true)

	refused, err := g.record(ctx, ghwrite.Write{Kind: "labeled", Item: issue, Label: "bug"})
	if err != nil {
		t.Fatal(err)
	}
	refused(0, errors.New("422 Validation Failed"), true)
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
		done(7, nil, true)
	}
	var pending []string
	for _, w := range []ghwrite.Write{{Kind: "comment", Item: issue, Body: "LGTM"}, {Kind: "labeled", Item: issue, Label: "bug"}} {
		for _, k := range writeKeys(w) {
			if v, ok, _ := metaOf(t, r, k); ok {
				pending = append(pending, w.Kind+"="+v)
			}
		}
	}
	if !slices.Equal(pending, []string{"labeled=1 1-talk"}) {
		t.Errorf("records %q, want only the label's (issues are polled, comments are not)", pending)
	}
}

// metaOf reads the store's meta key in a transaction of its own.
func metaOf(t *testing.T, r *Runner, key string) (v string, ok bool, err error) {
	t.Helper()
	err = r.Store.Tx(context.Background(), func(tx *store.Tx) error {
		v, ok, err = tx.Meta(key)
		return err
	})
	return v, ok, err
}
