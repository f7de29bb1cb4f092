package effect

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghfake"
)

// TestOnlyTheRepositorysOwnPullsAreAgentPulls: a pull request from a fork (head.repo another
// repository, or null: the fork was deleted), or into another branch than the default, is not
// an agent's proposal, whatever its branch is named: it counts for no max_open_agent_prs and is
// no branch's proposal.
func TestOnlyTheRepositorysOwnPullsAreAgentPulls(t *testing.T) {
	const sha = `"sha":"1111111111111111111111111111111111111111"`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[
{"number":7,"head":{"ref":"autonomy/develop/42","label":"mallory:autonomy/develop/42",`+sha+`,"repo":{"full_name":"mallory/r","fork":true}},"base":{"ref":"main","repo":{"full_name":"o/r"}}},
{"number":8,"head":{"ref":"autonomy/develop/43","label":"ghost:autonomy/develop/43",`+sha+`,"repo":null},"base":{"ref":"main","repo":{"full_name":"o/r"}}},
{"number":9,"head":{"ref":"autonomy/develop/44","label":"o:autonomy/develop/44",`+sha+`,"repo":{"full_name":"o/r"}},"base":{"ref":"release","repo":{"full_name":"o/r"}}},
{"number":10,"head":{"ref":"feature","label":"o:feature",`+sha+`,"repo":{"full_name":"o/r"}},"base":{"ref":"main","repo":{"full_name":"o/r"}}},
{"number":11,"head":{"ref":"autonomy/develop/45","label":"O:autonomy/develop/45",`+sha+`,"repo":{"full_name":"O/R"}},"base":{"ref":"main","repo":{"full_name":"O/R"}}}]`)
	}))
	defer srv.Close()
	client := github.NewClient(nil)
	client.BaseURL, _ = url.Parse(srv.URL + "/")
	e := &Env{Client: client, Owner: "o", Repo: "r", Out: io.Discard}
	open, err := e.openAgentPulls(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 1 || open[0].GetNumber() != 11 {
		var got []string
		for _, pr := range open {
			got = append(got, "#"+strconv.Itoa(pr.GetNumber())+" "+pr.GetHead().GetLabel())
		}
		t.Errorf("agent pull requests: %v, want only #11 (the repository's own, its name's case aside)", got)
	}
	all := []*github.PullRequest{
		{Number: github.Int(7), Head: &github.PullRequestBranch{Ref: github.String("autonomy/develop/42"), Repo: &github.Repository{FullName: github.String("mallory/r")}}, Base: &github.PullRequestBranch{Ref: github.String("main")}},
		{Number: github.Int(8), Head: &github.PullRequestBranch{Ref: github.String("autonomy/develop/42")}, Base: &github.PullRequestBranch{Ref: github.String("main")}},
		{Number: github.Int(9), Head: &github.PullRequestBranch{Ref: github.String("autonomy/develop/42"), Repo: &github.Repository{FullName: github.String("o/r")}}, Base: &github.PullRequestBranch{Ref: github.String("release")}},
	}
	if got := e.pullFrom(all, "autonomy/develop/42", "main"); got != nil {
		t.Errorf("pullFrom takes #%d as the proposal of autonomy/develop/42", got.GetNumber())
	}
}

// TestProposeLeavesAForkPullOfItsBranchNameAlone: a fork's pull request from a branch named as
// the agent's (autonomy/develop/1) is not adopted: the agent's branch gets its own pull request
// from the repository (GitHub allows both), armed for the head pushed; the fork's gets no label,
// body, auto-merge, gate or reviewer, and does not count against max_open_agent_prs.
func TestProposeLeavesAForkPullOfItsBranchNameAlone(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.fake.SetSettings(ghfake.Settings{AllowAutoMerge: true})
	w.fake.Protect("main", ghfake.Protection{Contexts: []string{StatusContext}})
	evil := w.root + "/mallory"
	run(t, w.root, "git", "clone", "--quiet", w.origin, evil)
	write(t, evil, "src/a.go", "package a // mallory\n")
	run(t, evil, "git", "commit", "--quiet", "-am", "harmless")
	run(t, evil, "git", "push", "--quiet", "origin", "HEAD:"+ghfake.ForkRef("mallory", "autonomy/develop/1"))
	evilHead := run(t, evil, "git", "rev-parse", "HEAD")
	fork, err := w.fake.OpenForkPull("mallory", "Fix the thing", "autonomy/develop/1", "main")
	if err != nil {
		t.Fatal(err)
	}
	e := w.env("develop")
	e.Policy.Box.MaxOpenAgentPRs = 1 // the fork's pull request does not fill it
	p, err := Propose(ctx, e, w.agentBundle(map[string]string{"src/a.go": "package a\n\nfunc A() {}\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if p.PR == fork || !p.Created || p.Capped {
		t.Fatalf("the proposal: #%d created=%v capped=%v; mallory's is #%d", p.PR, p.Created, p.Capped, fork)
	}
	own, _, err := e.Client.PullRequests.Get(ctx, "o", "r", p.PR)
	if err != nil {
		t.Fatal(err)
	}
	if own.GetHead().GetLabel() != "o:autonomy/develop/1" || own.GetHead().GetSHA() != p.Head || !w.fake.AutoMerge(p.PR) {
		t.Errorf("the agent's pull request #%d: head %s at %s (pushed %s), auto-merge %v", p.PR, own.GetHead().GetLabel(), own.GetHead().GetSHA(), p.Head, w.fake.AutoMerge(p.PR))
	}
	is, _ := w.fake.Issue(fork)
	if len(is.Labels) > 0 || is.Body != "" || w.fake.AutoMerge(fork) || len(is.Comments) > 0 {
		t.Errorf("mallory's pull request #%d was touched: labels %v, body %q, auto-merge %v, comments %q", fork, is.Labels, is.Body, w.fake.AutoMerge(fork), is.Comments)
	}
	forkPR, _, err := e.Client.PullRequests.Get(ctx, "o", "r", fork)
	if err != nil || forkPR.GetHead().GetSHA() != evilHead {
		t.Errorf("mallory's pull request's head: %s, want her %s (%v)", forkPR.GetHead().GetSHA(), evilHead, err)
	}
	for _, r := range w.fake.Runs() {
		for _, v := range r.Inputs {
			if v == strconv.Itoa(fork) {
				t.Errorf("%s was dispatched on mallory's pull request #%d: %v", r.Workflow, fork, r.Inputs)
			}
		}
	}
}

// TestArmAutoMergeOnlyForThePushedHead: auto-merge is armed for the head the proposal pushed
// (expectedHeadOid): a pull request whose head is another commit is not armed.
func TestArmAutoMergeOnlyForThePushedHead(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.fake.SetSettings(ghfake.Settings{AllowAutoMerge: true})
	w.fake.Protect("main", ghfake.Protection{Contexts: []string{StatusContext}})
	e := w.env("develop")
	p, err := Propose(ctx, e, w.agentBundle(map[string]string{"src/a.go": "package a\n\nfunc A() {}\n"}))
	if err != nil {
		t.Fatal(err)
	}
	pr, _, err := e.Client.PullRequests.Get(ctx, "o", "r", p.PR)
	if err != nil {
		t.Fatal(err)
	}
	base := w.branch("main")
	if err := e.armAutoMerge(ctx, pr.GetNodeID(), base); err == nil {
		t.Errorf("auto-merge armed on #%d (head %s) for %s, another commit", p.PR, pr.GetHead().GetSHA(), base)
	}
}

// TestProposalSubjectHasOneSpelling: a work item's number names the branch in one spelling only:
// any other is refused, naming the input and how to write it.
func TestProposalSubjectHasOneSpelling(t *testing.T) {
	for _, s := range []string{"+42", "042", "0x2A", " 42", "4_2", "42 "} {
		e := &Env{Actor: "develop", Subject: s}
		subject, item, err := e.proposalSubject()
		if err == nil || !strings.Contains(err.Error(), strconv.Quote(s)) || !strings.Contains(err.Error(), "like 42") {
			t.Errorf("subject %q: branch autonomy/develop/%s for item #%d (%v): want it refused, naming it and the fix", s, subject, item, err)
		}
	}
	e := &Env{Actor: "develop", Subject: "42"}
	if subject, item, err := e.proposalSubject(); subject != "42" || item != 42 || err != nil {
		t.Errorf("subject 42: %q, %d, %v", subject, item, err)
	}
}

// forkPull opens login's pull request from branch of their fork, one commit on main, and returns
// its number and head.
func (w *world) forkPull(login, branch string) (int, string) {
	t := w.t
	dir := filepath.Join(w.root, "fork-"+login)
	run(t, w.root, "git", "clone", "--quiet", w.origin, dir)
	write(t, dir, "src/a.go", "package a // "+login+"\n")
	run(t, dir, "git", "commit", "--quiet", "-am", "from "+login)
	run(t, dir, "git", "push", "--quiet", "origin", "HEAD:"+ghfake.ForkRef(login, branch))
	n, err := w.fake.OpenForkPull(login, "from "+login, branch, "main")
	if err != nil {
		t.Fatal(err)
	}
	return n, run(t, dir, "git", "rev-parse", "HEAD")
}

// TestReviewRefusesAnUntrustedForksPull: the reviewer posts no agent-review on a fork's pull
// request by an author the repository does not trust, however it was fired (a dispatch names
// any pull request), as its pull_request_target trigger is gated; a trusted author's is reviewed.
func TestReviewRefusesAnUntrustedForksPull(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	evil, evilHead := w.forkPull("mallory", "autonomy/develop/1")
	e := w.env("reviewer")
	e.Subject = strconv.Itoa(evil)
	var refused *Refused
	if v, err := Review(ctx, e, w.verdict(evilHead, "approve")); !errors.As(err, &refused) || !strings.Contains(err.Error(), "mallory:autonomy/develop/1") {
		t.Errorf("review of mallory's fork pull request #%d: %+v, %v: want it refused", evil, v, err)
	}
	if st := w.fake.Statuses(evilHead); len(st) > 0 {
		t.Errorf("statuses on mallory's head: %+v", st)
	}
	// A trusted member's pull request from mallory's fork: mallory pushes its head.
	lent, err := w.fake.OpenForkPullBy("dev", "mallory", "from mallory, opened by dev", "autonomy/develop/1", "main")
	if err != nil {
		t.Fatal(err)
	}
	e.Subject = strconv.Itoa(lent)
	if v, err := Review(ctx, e, w.verdict(evilHead, "approve")); !errors.As(err, &refused) || !strings.Contains(err.Error(), "comes from mallory's fork") {
		t.Errorf("review of dev's pull request #%d from mallory's fork: %+v, %v: want it refused", lent, v, err)
	}
	if st := w.fake.Statuses(evilHead); len(st) > 0 {
		t.Errorf("statuses on mallory's head: %+v", st)
	}
	good, goodHead := w.forkPull("dev", "fix")
	e.Subject = strconv.Itoa(good)
	if v, err := Review(ctx, e, w.verdict(goodHead, "approve")); err != nil || v.State != "success" {
		t.Errorf("review of a collaborator's fork pull request #%d: %+v, %v", good, v, err)
	}
	e.Subject = "+" + strconv.Itoa(good)
	if v, err := Review(ctx, e, w.verdict(goodHead, "approve")); err == nil || !strings.Contains(err.Error(), "like 42") {
		t.Errorf("review of subject %q: %+v, %v: want it refused", e.Subject, v, err)
	}
}

// TestHumanGateSubjectHasOneSpelling: the human gate acts on a pull request named in its one
// spelling: another (+1, 01) is refused, naming it, before anything is read or posted.
func TestHumanGateSubjectHasOneSpelling(t *testing.T) {
	w := newWorld(t)
	e := w.env("control")
	for _, s := range []string{"+1", "01", " 1"} {
		e.Subject = s
		if g, err := CheckHumanGate(context.Background(), e); err == nil || !strings.Contains(err.Error(), strconv.Quote(s)) || !strings.Contains(err.Error(), "like 42") {
			t.Errorf("human gate of %q: %+v, %v: want it refused", s, g, err)
		}
	}
}
