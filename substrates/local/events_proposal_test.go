//go:build unix

package local

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// watchFleet is flowFleet with an actor fired by every pull request opened or given a new head.
func watchFleet() fleet {
	f := flowFleet
	f.yml = strings.Replace(f.yml, "policy:\n  box:\n", `  watcher:
    behavior: scripts/watch.sh
    triggers:
      - event: pull_request
        config: { types: [opened, synchronize] }
        params: { WHY: trigger.kind }
policy:
  box:
    local: { events: { repo: acme/app, poll_seconds: 10 } }
`, 1)
	if !strings.Contains(f.yml, "watcher:") {
		panic("flowFleet no longer has the policy block watchFleet extends")
	}
	files := map[string]string{"scripts/watch.sh": "#!/bin/sh\n" + scriptDone}
	for k, v := range flowFleet.files {
		files[k] = v
	}
	f.files = files
	return f
}

// On codeHost github the code flow pushes a proposal's head and opens its pull request with the
// operator's token, which GitHub reports as the operator's: the event source fires no actor on
// that opening or head (on gh-actions the propose job's token fires no workflow; the code flow
// reviews the proposal itself; an agent fired by pull_request that proposes would otherwise fire
// itself again on each pull request it opens). A person's push of another head to the branch
// fires as ever.
func TestTheCodeFlowsOwnPullFiresNoActor(t *testing.T) {
	t.Parallel()
	g := newGHFlowRigAs(t, watchFleet(), "acme") // the operator's token: its writes are acme's, the owner's
	es, err := g.r.NewEventSource(EventOptions{Token: ghSecret, BaseURL: g.gh.URL, HTTPClient: g.gh.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if rep := poll(t, es); !rep.First {
		t.Fatalf("first poll: %+v", rep)
	}
	_, n := g.armedOn42()
	rep := poll(t, es)
	if got := firedActors(rep); len(got) > 0 {
		t.Fatalf("the code flow's own pull request #%d fired %v (%+v)", n, got, rep.Fired)
	}
	if !strings.Contains(strings.Join(rep.Ignored, "\n"), "is the one the runner pushed to autonomy/develop/42 for a proposal") {
		t.Errorf("the opening was not reported skipped: %q", rep.Ignored)
	}
	if rep := poll(t, es); len(rep.Fired) > 0 {
		t.Fatalf("a second poll fired %v", firedActors(rep))
	}

	// A person pushes another commit to the proposal's branch: synchronize fires the watcher.
	work := filepath.Join(t.TempDir(), "w")
	gitRun(t, filepath.Dir(work), "clone", "-q", "--branch", "autonomy/develop/42", g.bare, work)
	gitRun(t, work, "-c", "user.email=p@example.com", "-c", "user.name=p", "commit", "-q", "--allow-empty", "-m", "a person's commit")
	gitRun(t, work, "push", "-q", "origin", "HEAD:refs/heads/autonomy/develop/42")
	rep = poll(t, es)
	if got := firedActors(rep); !slices.Equal(got, []string{"watcher"}) || rep.Fired[0].Params["WHY"] != "synchronize" {
		t.Fatalf("a person's head fired %v (%+v), want the watcher on synchronize", got, rep)
	}
	settle(t, g.r)
}
