package local

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/ghfake"
)

var issuesFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
codeHost: github
actors:
  triager:
    behavior: scripts/quick.sh
    triggers:
      - event: issues
        config: { types: [opened] }
        params: { ISSUE: subject.ref, WHO: subject.actor, ROLE: subject.actorRole, TEXT: subject.text, WHY: trigger.kind }
  develop:
    behavior: scripts/quick.sh
    triggers:
      - event: issues
        config: { types: [labeled, edited] }
        params: { ISSUE: subject.ref, WHO: subject.actor, WHY: trigger.kind }
policy:
  box:
    local: { events: { repo: acme/app } }
`,
	files: map[string]string{"scripts/quick.sh": "#!/bin/sh\n" + scriptDone},
}

// TestEventSourceIssues: an issue a collaborator opens fires the triager with the workflow's
// params, an outsider's fires nothing (opening is gated on the author), and a label a person
// puts on the outsider's issue fires develop (labeling takes triage access: not gated); a bot's
// label fires nothing; a restart fires nothing again.
func TestEventSourceIssues(t *testing.T) {
	g := newEventRig(t)
	g.dir = installFleet(t, issuesFleet, false)
	r, es := g.source(t)
	if rep := poll(t, es); !rep.First || len(rep.Fired) > 0 {
		t.Fatalf("first poll: %+v", rep)
	}
	theirs := g.gh.OpenIssue("mallory", "free bitcoin", "run this")
	g.clock.advance(1)
	ours := g.gh.OpenIssue("carol", "crash on start", "stack trace")
	if err := g.gh.Label(theirs, "carol", "ready"); err != nil {
		t.Fatal(err)
	}
	if err := g.gh.Label(ours, "renovate[bot]", "deps"); err != nil {
		t.Fatal(err)
	}
	rep := poll(t, es)
	if got := firedActors(rep); !slices.Equal(got, []string{"triager", "develop"}) {
		t.Fatalf("fired %v, want [triager develop]; %+v", got, rep)
	}
	tr, dv := rep.Fired[0].Params, rep.Fired[1].Params
	if tr["ISSUE"] != "3" || tr["WHO"] != "carol" || tr["ROLE"] != "COLLABORATOR" || tr["TEXT"] != "stack trace" || tr["WHY"] != "opened" {
		t.Errorf("triager params %v", tr)
	}
	if dv["ISSUE"] != "2" || dv["WHO"] != "carol" || dv["WHY"] != "labeled" {
		t.Errorf("develop params %v", dv)
	}
	ignored := strings.Join(rep.Ignored, "\n")
	if !strings.Contains(ignored, "issues opened 2 by mallory") || !strings.Contains(ignored, "renovate[bot]") {
		t.Errorf("ignored:\n%s", ignored)
	}
	lines := strings.Join(es.Unpolled(), "\n")
	if !strings.Contains(lines, "actor develop: event issues: edited never fire locally") {
		t.Errorf("unpolled:\n%s", lines)
	}
	settle(t, r)
	r.Close()
	_, es2 := g.source(t)
	if rep := poll(t, es2); len(rep.Fired) > 0 {
		t.Fatalf("after a restart: fired %v", firedActors(rep))
	}
}

var pullFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
codeHost: github
actors:
  reviewer:
    behavior: scripts/quick.sh
    triggers:
      - event: pull_request_target
        config: { types: [opened, synchronize] }
        params: { PR: subject.ref, WHO: subject.actor, ROLE: subject.actorRole, WHY: trigger.kind }
  merger:
    behavior: scripts/quick.sh
    triggers:
      - event: pull_request_review
        params: { PR: subject.ref, WHO: subject.actor, ROLE: subject.actorRole, WHY: trigger.kind }
policy:
  box:
    local: { events: { repo: acme/app } }
`,
	files: map[string]string{"scripts/quick.sh": "#!/bin/sh\n" + scriptDone},
}

// TestEventSourcePullRequests: a pull request of a branch of the repository, opened by someone who
// could push it, fires a pull_request_target trigger (the same-repository gate), with its number;
// a new head fires synchronize; a collaborator's review fires pull_request_review, an outsider's
// nothing; each once, across a restart.
func TestEventSourcePullRequests(t *testing.T) {
	bare := filepath.Join(t.TempDir(), "origin.git")
	work := filepath.Join(t.TempDir(), "w")
	gitRun(t, filepath.Dir(bare), "init", "-q", "--bare", bare)
	gitRun(t, filepath.Dir(work), "clone", "-q", bare, work)
	for _, args := range [][]string{
		{"-c", "user.email=t@x", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "one"},
		{"push", "-q", "origin", "HEAD:refs/heads/main"},
		{"-c", "user.email=t@x", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "two"},
		{"push", "-q", "origin", "HEAD:refs/heads/fix"},
	} {
		gitRun(t, work, args...)
	}
	c := &clock{}
	c.Set("2026-03-02T10:00:00Z")
	gh, err := ghfake.New(ghfake.Options{Owner: "acme", Repo: "app", Token: "tok", Now: c.Now, GitDir: bare, Collaborators: map[string]string{"carol": "write"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	g := &eventRig{dir: installFleet(t, pullFleet, false), clock: c, gh: gh}
	r, es := g.source(t)
	poll(t, es)
	n, err := gh.OpenPull("dana", "fix it", "fix", "main")
	if err != nil {
		t.Fatal(err)
	}
	rep := poll(t, es)
	if got := firedActors(rep); !slices.Equal(got, []string{"reviewer"}) {
		t.Fatalf("fired %v, want [reviewer]; %+v", got, rep)
	}
	p := rep.Fired[0].Params
	if p["PR"] != strconv.Itoa(n) || p["WHO"] != "dana" || p["ROLE"] != "NONE" || p["WHY"] != "opened" || rep.Fired[0].Trigger != "pull_request_target" {
		t.Errorf("reviewer params %v trigger %s", p, rep.Fired[0].Trigger)
	}
	if rep := poll(t, es); len(rep.Fired) > 0 {
		t.Fatalf("an unchanged pull request fired %v", firedActors(rep))
	}
	// A new head: synchronize, once, across a restart.
	gitRun(t, work, "-c", "user.email=t@x", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "three")
	gitRun(t, work, "push", "-q", "origin", "HEAD:refs/heads/fix")
	rep = poll(t, es)
	if got := firedActors(rep); !slices.Equal(got, []string{"reviewer"}) || rep.Fired[0].Params["WHY"] != "synchronize" {
		t.Fatalf("a new head fired %v (%v), want the reviewer on synchronize", got, rep.Fired)
	}
	// Reviews: a collaborator's fires merger, an outsider's nothing; each once.
	if _, err := gh.AddReview(n, "carol", "APPROVED"); err != nil {
		t.Fatal(err)
	}
	gh.AddReview(n, "mallory", "APPROVED")
	rep = poll(t, es)
	if got := firedActors(rep); !slices.Equal(got, []string{"merger"}) {
		t.Fatalf("reviews fired %v (%+v), want [merger]", got, rep)
	}
	if p := rep.Fired[0].Params; p["WHO"] != "carol" || p["ROLE"] != "COLLABORATOR" || p["WHY"] != "submitted" || p["PR"] != strconv.Itoa(n) {
		t.Errorf("merger params %v", p)
	}
	if !strings.Contains(strings.Join(rep.Ignored, "\n"), "pull_request_review submitted") {
		t.Errorf("mallory's review was not reported ignored: %q", rep.Ignored)
	}
	settle(t, r)
	r.Close()
	_, es2 := g.source(t)
	if rep := poll(t, es2); len(rep.Fired) > 0 {
		t.Fatalf("after a restart: fired %v", firedActors(rep))
	}
}
