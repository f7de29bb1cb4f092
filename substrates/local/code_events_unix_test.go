//go:build unix

package local

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
)

// The reviewer the code flow launched on a proposal is not fired again by its own
// pull_request_target trigger for the same head (newc9: sdlc's reviewer, which declares one as
// the reference's does, reviewed every proposal twice, the second time in the installation root,
// not on the proposal). Another actor declaring the event still fires.
func TestTheFlowsReviewerIsNotFiredAgainByItsPullRequestTrigger(t *testing.T) {
	t.Parallel()
	f := flowFleet
	f.yml = strings.Replace(f.yml, "    triggers: [{ dispatch: true, params: { ROLE: subject.actorRole, WHO: subject.actor } }]\n",
		"    triggers:\n      - { dispatch: true, params: { ROLE: subject.actorRole, WHO: subject.actor } }\n      - { event: pull_request_target, config: { types: [opened, synchronize] } }\n"+
			"  watcher:\n    behavior: scripts/watch.sh\n    triggers: [{ event: pull_request_target, config: { types: [opened, synchronize] } }]\n", 1)
	f.files = maps.Clone(f.files)
	f.files["scripts/watch.sh"] = "#!/bin/sh\n" + scriptDone
	g := newFlowRigOf(t, f)
	p := g.propose("develop", "src/a.go", "package a", "approve")
	if p.State != store.ProposalMerged {
		t.Fatalf("the proposal: %s: %s", p.State, p.Reason)
	}
	settle(t, g.r)
	all, err := g.r.Store.List(context.Background(), store.ListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range all {
		got = append(got, s.Actor)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"develop", "reviewer", "watcher"}) {
		t.Errorf("sessions %v, want develop, one reviewer, watcher", got)
	}
}
