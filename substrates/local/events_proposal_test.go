//go:build unix

package local

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
)

// watchFleet is flowFleet with an actor fired by every pull request opened, reopened or given a
// new head.
func watchFleet() fleet {
	f := flowFleet
	f.yml = strings.Replace(f.yml, "policy:\n  box:\n", `  watcher:
    behavior: scripts/watch.sh
    triggers:
      - event: pull_request
        config: { types: [opened, synchronize, reopened] }
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

// A record of the code flow's push is spent by the one event it explains, fires nothing only for
// a pull request the runner's token opened, and is dropped once older than a week.
func TestAProposalPushRecordIsNarrow(t *testing.T) {
	t.Parallel()
	g := newGHFlowRigAs(t, watchFleet(), "acme")
	es, err := g.r.NewEventSource(EventOptions{Token: ghSecret, BaseURL: g.gh.URL, HTTPClient: g.gh.Client()})
	if err != nil {
		t.Fatal(err)
	}
	poll(t, es)
	_, n := g.armedOn42()
	if rep := poll(t, es); len(rep.Fired) > 0 {
		t.Fatalf("the code flow's own pull request #%d fired %v", n, firedActors(rep))
	}
	ctx := context.Background()
	meta := func(key string) (string, bool) {
		var v string
		var ok bool
		if err := g.r.Store.Tx(ctx, func(tx *store.Tx) (err error) { v, ok, err = tx.Meta(key); return err }); err != nil {
			t.Fatal(err)
		}
		return v, ok
	}
	if v, ok := meta(proposalPushKey("autonomy/develop/42")); ok {
		t.Fatalf("the record of the push is kept after its event: %q", v)
	}

	// A person opens a pull request from a branch at a head the runner recorded (say it pushed
	// there before): the opening is the person's, and fires.
	work := filepath.Join(t.TempDir(), "w")
	gitRun(t, filepath.Dir(work), "clone", "-q", g.bare, work)
	gitRun(t, work, "-c", "user.email=p@example.com", "-c", "user.name=p", "commit", "-q", "--allow-empty", "-m", "a person's commit")
	gitRun(t, work, "push", "-q", "origin", "HEAD:refs/heads/feature")
	head := strings.TrimSpace(gitRun(t, work, "rev-parse", "HEAD"))
	now := g.r.opts.Now()
	if err := recordProposalPush(ctx, g.r.Store, "feature", head, now); err != nil {
		t.Fatal(err)
	}
	if _, err := g.gh.OpenPull("mallory", "a person's change", "feature", "main"); err != nil {
		t.Fatal(err)
	}
	if rep := poll(t, es); !slices.Equal(firedActors(rep), []string{"watcher"}) {
		t.Fatalf("a person's pull request at a recorded head fired %v (%+v), want the watcher", firedActors(rep), rep)
	}

	// A person closes and reopens the runner's pull request, its head one the runner recorded (say
	// it pushed the same head again): the reopening is the person's, and fires.
	at := strings.TrimSpace(gitRun(t, work, "--git-dir", g.bare, "rev-parse", "autonomy/develop/42"))
	if err := recordProposalPush(ctx, g.r.Store, "autonomy/develop/42", at, now); err != nil {
		t.Fatal(err)
	}
	if err := g.gh.SetState(n, "mallory", "closed"); err != nil {
		t.Fatal(err)
	}
	if err := g.gh.SetState(n, "mallory", "open"); err != nil {
		t.Fatal(err)
	}
	if rep := poll(t, es); !slices.Equal(firedActors(rep), []string{"watcher"}) || rep.Fired[0].Params["WHY"] != "reopened" {
		t.Fatalf("a person's reopening fired %v (%+v), want the watcher on reopened", firedActors(rep), rep)
	}

	// The runner's token opens a pull request from a branch it recorded a later head for (that
	// push failed, or the runner stopped before it): the opening is still the code flow's.
	gitRun(t, work, "push", "-q", "origin", "HEAD:refs/heads/autonomy/develop/7")
	if err := recordProposalPush(ctx, g.r.Store, "autonomy/develop/7", strings.Repeat("ab", 20), now); err != nil {
		t.Fatal(err)
	}
	if _, err := g.gh.OpenPull("acme", "the runner's proposal", "autonomy/develop/7", "main"); err != nil {
		t.Fatal(err)
	}
	rep := poll(t, es)
	if len(rep.Fired) > 0 || !strings.Contains(strings.Join(rep.Ignored, "\n"), "the runner opened it from autonomy/develop/7") {
		t.Fatalf("the runner's opening with a later head recorded fired %v (ignored %q)", firedActors(rep), rep.Ignored)
	}

	// A pull request no longer open is forgotten: its last head is not kept.
	if _, ok := meta(headKey(n)); !ok {
		t.Fatalf("the open pull request #%d has no head kept", n)
	}
	if err := g.gh.SetState(n, "mallory", "closed"); err != nil {
		t.Fatal(err)
	}
	poll(t, es)
	if v, ok := meta(headKey(n)); ok {
		t.Errorf("the head of the closed pull request #%d is still kept: %q", n, v)
	}

	// A record older than a week explains no event: the operator's own opening from that branch
	// fires.
	gitRun(t, work, "push", "-q", "origin", "HEAD:refs/heads/autonomy/develop/9")
	if err := recordProposalPush(ctx, g.r.Store, "autonomy/develop/9", head, now.Add(-proposalPushKept-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := g.gh.OpenPull("acme", "the operator's change", "autonomy/develop/9", "main"); err != nil {
		t.Fatal(err)
	}
	if rep := poll(t, es); !slices.Equal(firedActors(rep), []string{"watcher"}) {
		t.Fatalf("an opening from a branch of a week-old record fired %v (ignored %q), want the watcher", firedActors(rep), rep.Ignored)
	}

	// Records older than a week are dropped when the next push is recorded.
	if err := recordProposalPush(ctx, g.r.Store, "autonomy/old/1", head, now.Add(-proposalPushKept-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := recordProposalPush(ctx, g.r.Store, "autonomy/new/2", head, now); err != nil {
		t.Fatal(err)
	}
	if v, ok := meta(proposalPushKey("autonomy/old/1")); ok {
		t.Errorf("a record of eight days ago is kept: %q", v)
	}
	if _, ok := meta(proposalPushKey("autonomy/new/2")); !ok {
		t.Error("the new record is missing")
	}
	settle(t, g.r)
}

// closeWatchFleet is flowFleet with an actor fired by every pull request closed.
func closeWatchFleet() fleet {
	f := watchFleet()
	f.yml = strings.Replace(f.yml, "config: { types: [opened, synchronize, reopened] }", "config: { types: [closed] }", 1)
	return f
}

// The code flow arms GitHub's auto-merge with the operator's token, so GitHub records the merge,
// and the pull request's closing, as the operator's: the event source fires no actor on that
// closing (on gh-actions, the workflow token's auto-merge fires no workflow; an agent fired by
// pull_request closed that proposes would otherwise fire itself again on each merge of its own
// proposals, without end). A person's merge, or closing, fires as ever.
func TestTheCodeFlowsOwnMergeFiresNoActor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		merge func(g *ghFlowRig, n int) error
		fires bool
	}{
		{"the auto-merge the code flow armed", func(g *ghFlowRig, n int) error { return g.gh.MergeArmed(n) }, false},
		{"a person's merge", func(g *ghFlowRig, n int) error { return g.gh.MergePull(n, "maintainer", "squash") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGHFlowRigAs(t, closeWatchFleet(), "acme") // the operator's token: its writes are acme's
			es, err := g.r.NewEventSource(EventOptions{Token: ghSecret, BaseURL: g.gh.URL, HTTPClient: g.gh.Client()})
			if err != nil {
				t.Fatal(err)
			}
			if rep := poll(t, es); !rep.First {
				t.Fatalf("first poll: %+v", rep)
			}
			p, n := g.armedOn42()
			if err := tc.merge(g, n); err != nil {
				t.Fatal(err)
			}
			rep := poll(t, es)
			got := firedActors(rep)
			if !tc.fires {
				if len(got) > 0 {
					t.Fatalf("the code flow's own merge of #%d fired %v (%+v)", n, got, rep.Fired)
				}
				if want := fmt.Sprintf("the code flow's auto-merge of proposal %d (at %s) merged it", p.Seq, short(p.Head)); !strings.Contains(strings.Join(rep.Ignored, "\n"), want) {
					t.Errorf("the closing was not reported skipped (%q): %q", want, rep.Ignored)
				}
			} else if !slices.Equal(got, []string{"watcher"}) || rep.Fired[0].Params["WHY"] != "closed" {
				t.Fatalf("a person's merge of #%d fired %v (%+v), want the watcher on closed", n, got, rep)
			}
			settle(t, g.r)
		})
	}
}

// A proposal approved but never armed (held for a maintainer: it changes a human-required path)
// that a person merges with the runner's own login (locally the token is usually the
// maintainer's) fires the closed actor: only the head the code flow armed is its own merge.
func TestAMergeOfAnUnarmedProposalFires(t *testing.T) {
	t.Parallel()
	g := newGHFlowRigAs(t, closeWatchFleet(), "acme")
	es, err := g.r.NewEventSource(EventOptions{Token: ghSecret, BaseURL: g.gh.URL, HTTPClient: g.gh.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if rep := poll(t, es); !rep.First {
		t.Fatalf("first poll: %+v", rep)
	}
	p, n := g.askedForVision("the agent's vision\n")
	if g.gh.AutoMerge(n) {
		t.Fatalf("proposal %d is armed before its maintainer's act: %s", p.Seq, p.Reason)
	}
	if err := g.gh.MergePull(n, "acme", "merge"); err != nil {
		t.Fatal(err)
	}
	rep := poll(t, es)
	if got := firedActors(rep); !slices.Equal(got, []string{"watcher"}) || rep.Fired[0].Params["WHY"] != "closed" {
		t.Fatalf("a person's merge of the unarmed #%d fired %v (ignored %q), want the watcher on closed", n, got, rep.Ignored)
	}
	waitEnded(t, g.r, rep.Fired[0].ID) // the maintainer's ask stays open: nobody answered it
}

// On codeHost github the reviewer the code flow launched on a proposal's head is not fired again
// by the polled opening or synchronize of the proposal's pull request, although it declares
// pull_request_target as sdlc's reviewer does (newc9 fixed the same on codeHost local-git with
// CodeEvent.Reviewing; here skipProposalPush covers it): one reviewer session per head, whatever
// the polls and ticks around it. The runner writes with the operator's token, whose writes GitHub
// records as the operator's (a bot's would fire nothing anyway). Another actor declaring the
// event (the watcher) still fires, once per head, by the code flow's own event.
func TestTheFlowsReviewerIsNotFiredAgainByAPolledPullRequest(t *testing.T) {
	t.Parallel()
	f := watchFleet()
	f.yml = strings.Replace(f.yml, "    triggers: [{ dispatch: true, params: { ROLE: subject.actorRole, WHO: subject.actor } }]\n",
		"    triggers:\n      - { dispatch: true, params: { ROLE: subject.actorRole, WHO: subject.actor } }\n"+
			"      - { event: pull_request_target, config: { types: [opened, synchronize, reopened] }, params: { WHY: trigger.kind } }\n", 1)
	if !strings.Contains(f.yml, "event: pull_request_target") {
		t.Fatal("the reviewer's triggers moved: no pull_request_target added")
	}
	g := newGHFlowRigAs(t, f, "acme")
	es, err := g.r.NewEventSource(EventOptions{Token: ghSecret, BaseURL: g.gh.URL, HTTPClient: g.gh.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	count := func(actor string) int {
		t.Helper()
		all, err := g.r.Store.List(ctx, store.ListOptions{All: true})
		if err != nil {
			t.Fatal(err)
		}
		c := 0
		for _, s := range all {
			if s.Actor == actor {
				c++
			}
		}
		return c
	}
	pollAndTick := func() []string {
		t.Helper()
		var fired []string
		for i := 0; i < 2; i++ {
			fired = append(fired, firedActors(poll(t, es))...)
			if _, err := g.r.Tick(ctx); err != nil {
				t.Fatal(err)
			}
		}
		fired = append(fired, firedActors(poll(t, es))...)
		settle(t, g.r)
		return fired
	}
	if rep := poll(t, es); !rep.First {
		t.Fatalf("first poll: %+v", rep)
	}

	// The opening: the flow's reviewer once, the watcher once.
	first, n := g.armedOn42()
	if fired := pollAndTick(); slices.Contains(fired, "reviewer") {
		t.Errorf("the polled opening of #%d fired %v: the flow's reviewer again", n, fired)
	}
	if got, watcher := count("reviewer"), count("watcher"); got != 1 || watcher != 1 {
		t.Errorf("after the opening of #%d at %s: %d reviewer sessions, %d watcher sessions; want 1 and 1", n, short(first.Head), got, watcher)
	}

	// A new head on the same pull request (synchronize): once more each.
	g.gh.DisableAutoMerge(n)
	second := g.proposeOnGitHub("42", "src/b.go", "package b", "approve")
	if second.State != store.ProposalApproved || g.pullOfBranch("autonomy/develop/42") != n {
		t.Fatalf("the second proposal: %+v, pull request #%d", second, g.pullOfBranch("autonomy/develop/42"))
	}
	if fired := pollAndTick(); slices.Contains(fired, "reviewer") {
		t.Errorf("the polled synchronize of #%d fired %v: the flow's reviewer again", n, fired)
	}
	if got, watcher := count("reviewer"), count("watcher"); got != 2 || watcher != 2 {
		t.Errorf("after the new head %s of #%d: %d reviewer sessions, %d watcher sessions; want 2 and 2", short(second.Head), n, got, watcher)
	}
}
