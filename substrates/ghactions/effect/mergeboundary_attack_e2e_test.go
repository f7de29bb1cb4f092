//go:build unix

package effect_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// The attacks an independent review found on the human gate, each replayed through the
// generated workflows: every one merged a human-required change with no maintainer before the
// fix.

// TestGateReplayedApproval: an agent holding issues: write and actions: write (pm's model job)
// edits the ask's head= to a new head it pushed, deletes the bot's resolution, and re-runs the
// control run of the maintainer's old /agent approve (the same event payload): the edited ask is
// refused and the new head stays unapproved.
func TestGateReplayedApproval(t *testing.T) {
	t.Parallel()
	f := boundary(t)
	p := f.proposeFiles(map[string]string{"docs/VISION.md": "# benign\n"})
	n, token := p.N, f.askToken(p.N)
	f.command(n, "ada", "OWNER", "/agent approve "+token, false)
	pr, _ := f.fake.Issue(n)
	var cmdID int64
	for i, b := range pr.Comments {
		if b == "/agent approve "+token {
			cmdID = pr.CommentIDs[i]
		}
	}
	newHead := f.pushOnto(pr.Head, "evil", map[string]string{"docs/VISION.md": "# evil\n"})
	f.gateJob(n, "pull_request_target")
	headRe := regexp.MustCompile(`head=[0-9a-f]{40}`)
	for i, b := range pr.Comments {
		switch {
		case strings.HasPrefix(b, "<!-- autonomy:ask"):
			if err := f.fake.EditComment(pr.CommentIDs[i], headRe.ReplaceAllString(b, "head="+newHead)); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(b, "<!-- autonomy:resolution"):
			if err := f.fake.DeleteComment(pr.CommentIDs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, _ := f.r.job(f.wf("autonomy-control"), "command", f.commentEvent(n, cmdID, "ada", "OWNER", "/agent approve "+token), true)
	if !strings.Contains(out, "was edited") {
		t.Errorf("the replay was not refused for the edited ask:\n%s", out)
	}
	f.passChecks(newHead)
	if g := f.gateOf(newHead); g.State == "success" {
		t.Fatalf("the replayed approval approved the new head: %+v", g)
	}
	if ok, _ := f.fake.Mergeable(n); ok {
		t.Fatal("the new head merges on a replayed approval")
	}
}

// TestGateRulesUnchangeable: a proposal that changes the installation's data (emptying the
// human-required paths the gate reads) or the repository's own actions is refused.
func TestGateRulesUnchangeable(t *testing.T) {
	t.Parallel()
	for name, files := range map[string]map[string]string{
		".autonomy":        {".autonomy/human-required-paths.json": `{"human_required_paths": []}` + "\n"},
		".github/actions":  {".github/actions/setup/action.yml": "runs: {using: composite, steps: []}\n"},
		"a line in a name": {"deploy/prod\n.yml": "replicas: 0\n"},
	} {
		t.Run(name, func(t *testing.T) {
			f := boundary(t)
			dir := f.work("agent")
			f.write(dir, "tidy", files)
			f.export(dir, "4242")
			out := f.propose(true)
			if is, _ := f.fake.Issue(f.item); len(is.Comments) != 1 || !strings.Contains(is.Comments[0], "was not opened") {
				t.Errorf("no refusal on the work item: %q\n%s", is.Comments, out)
			}
			if pulls := f.fake.Pulls(); len(pulls) != 0 {
				t.Errorf("pull requests opened: %v", pulls)
			}
		})
	}
}

// TestGateDispatchOnAgentBranch: a dispatch of the control workflow on a branch other than the
// default one (an agent's, whose .autonomy/ it could have changed) runs no gate job.
func TestGateDispatchOnAgentBranch(t *testing.T) {
	t.Parallel()
	f := boundary(t)
	p := f.proposeFiles(map[string]string{"deploy/prod.yml": "replicas: 0\n"})
	n, pr := p.N, p.PR
	v := map[string]string{
		"github.token": "ghs_e2e", "github.event_name": "workflow_dispatch", "github.sha": f.mainSHA(), "github.ref": "refs/heads/" + pr.Head,
		"github.event.repository.default_branch": "main", "github.run_id": "6363", "inputs." + effect.GateInput: strconv.Itoa(n),
	}
	for _, job := range []string{"human-gate", "sweep"} {
		if out, ran := f.r.job(f.wf("autonomy-control"), job, v, false); ran {
			t.Errorf("the %s job ran on a dispatch of %s:\n%s", job, pr.Head, out)
		}
	}
}

// TestGateSharedCommit: a commit's gate is the commit's, in whatever pull request it is: a pull
// request into another branch than the default posts none, and a success of the paths is
// evaluated again when the commit comes back into the default branch, where it changes a
// human-required path.
func TestGateSharedCommit(t *testing.T) {
	t.Parallel()
	f := boundary(t)
	dir := f.work("agent")
	f.write(dir, "P", map[string]string{"deploy/prod.yml": "replicas: 0\n"})
	f.export(dir, "4242")
	f.propose(false)
	f.write(dir, "H", map[string]string{"README.benign": "hi\n"})
	h := gitRun(t, dir, "rev-parse", "HEAD")
	gitRun(t, dir, "push", "--quiet", "origin", "HEAD:refs/heads/fork-h")
	side := openPull(t, f, "fork-h", "autonomy/develop/1")
	if out := f.gateJob(side, "pull_request_target"); !strings.Contains(out, "not the default branch") {
		t.Errorf("the gate of a pull request into autonomy/develop/1:\n%s", out)
	}
	if g := f.gateOf(h); g.State != "" {
		t.Fatalf("a pull request into another branch posted %+v on its head", g)
	}
	// The commit is posted success by its paths from somewhere (as a former evaluation would
	// have); brought into main, it is evaluated again.
	if err := postStatus(f, h, effect.HumanApprovalContext, "success"); err != nil {
		t.Fatal(err)
	}
	f.item = f.fake.AddIssue("another", "")
	f.export(dir, "4242")
	f.propose(false)
	var n int
	for _, x := range f.fake.Pulls() {
		if is, _ := f.fake.Issue(x); is.Head == "autonomy/develop/"+strconv.Itoa(f.item) {
			n = x
		}
	}
	f.passChecks(h)
	if g := f.gateOf(h); g.State != "pending" || !strings.Contains(g.Description, "deploy/prod.yml") {
		t.Errorf("the gate of the shared commit in main's pull request: %+v, want pending for deploy/prod.yml", g)
	}
	if ok, _ := f.fake.Mergeable(n); ok {
		t.Fatal("the shared commit's deploy change merges into main with no maintainer")
	}
}

// The second review's attacks: a pull request's base is its author's to change, any job's token
// writes as the bot, and the control job installs autonomy before it reads anything.

// openPull opens a pull request from head into base through the fake's API, as a person would.
func openPull(t *testing.T, f *fleet, head, base string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", f.fake.URL+"repos/o/r/pulls", strings.NewReader(`{"title":"x","head":"`+head+`","base":"`+base+`"}`))
	req.Header.Set("Authorization", "Bearer ghs_e2e")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct{ Number int }
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || p.Number == 0 {
		t.Fatalf("opening %s into %s: %v (%s)", head, base, err, resp.Status)
	}
	return p.Number
}

// outsiderOn pushes, as fork-x, the agent's proposal plus what change does, and returns its head.
func (f *fleet) outsiderOn(proposal string, change func(dir string)) string {
	f.t.Helper()
	x := f.work("outsider")
	gitRun(f.t, x, "fetch", "--quiet", "origin", proposal)
	gitRun(f.t, x, "checkout", "--quiet", "FETCH_HEAD")
	change(x)
	gitRun(f.t, x, "push", "--quiet", "origin", "HEAD:refs/heads/fork-x")
	return gitRun(f.t, x, "rev-parse", "HEAD")
}

// TestGateBaseFlip: the author of a pull request into main that changes docs/VISION.md
// retargets it, while its gate is evaluated, onto a branch where it changes only a note, and back
// (no event fires on the way back): the gate reads the paths against the default branch, not the
// pull request's base, and stays pending.
func TestGateBaseFlip(t *testing.T) {
	t.Parallel()
	f := boundary(t)
	pa := f.proposeFiles(map[string]string{"docs/VISION.md": "# evil vision\n", "docs/notes.md": "n\n"}).PR
	x := f.outsiderOn(pa.Head, func(x string) {
		gitRun(t, x, "rm", "--quiet", "docs/notes.md")
		f.commit(x, "tidy")
	})
	b := openPull(t, f, "fork-x", "main")
	var phase atomic.Int32
	f.fake.BeforeEach(func(method, path string) {
		switch {
		case method == "GET" && strings.HasSuffix(path, "/commits/"+x+"/statuses") && phase.CompareAndSwap(0, 1):
			_ = f.fake.SetBase(b, pa.Head) // after the base was read
		case method == "GET" && strings.HasSuffix(path, "/pulls/"+strconv.Itoa(b)) && phase.CompareAndSwap(1, 2):
			_ = f.fake.SetBase(b, "main") // before the pull request is read again
		}
	})
	out := f.gateJob(b, "pull_request_target")
	f.fake.BeforeEach(nil)
	if phase.Load() != 2 {
		t.Fatalf("the base was not flipped during the evaluation (phase %d):\n%s", phase.Load(), out)
	}
	f.passChecks(x)
	if g := f.gateOf(x); g.State == "success" {
		t.Fatalf("the gate of a change to docs/VISION.md into main: %+v\n%s", g, out)
	}
	if ok, _ := f.fake.Mergeable(b); ok {
		t.Fatal("docs/VISION.md merges into main with no maintainer")
	}
}

// TestGateApprovalIntoAnotherBranch: neither a maintainer's /agent approve of an ask (forged by
// an agent's token, as the bot) on a pull request into a side branch, nor an approving review
// given while a pull request went into a side branch, approves its head as a change into main.
func TestGateApprovalIntoAnotherBranch(t *testing.T) {
	t.Parallel()
	f := boundary(t)
	pa := f.proposeFiles(map[string]string{"docs/VISION.md": "# evil vision\n"}).PR
	x := f.outsiderOn(pa.Head, func(x string) { f.write(x, "typo", map[string]string{"docs/typo.md": "fixed\n"}) })
	side := openPull(t, f, "fork-x", pa.Head) // into the proposal's branch: a one-file diff there
	tok := strings.Repeat("ab", 16)
	ask := "<!-- autonomy:ask actor=maintainers token=" + tok + " at=2026-01-01T00:00:00Z run=1 head=" + x + " -->\n### Input required\n\nA one-line typo fix.\n"
	if _, err := f.fake.AddComment(side, "", ask); err != nil { // "": github-actions[bot], any job's token
		t.Fatal(err)
	}
	if out := f.command(side, "ada", "OWNER", "/agent approve "+tok, true); !strings.Contains(out, "not the default branch") {
		t.Errorf("the approval of an ask on a pull request into %s:\n%s", pa.Head, out)
	}
	if _, err := f.fake.AddReview(side, "bob", "APPROVED"); err != nil {
		t.Fatal(err)
	}
	f.gateJob(side, "pull_request_review")
	if err := f.fake.SetBase(side, "main"); err != nil {
		t.Fatal(err)
	}
	f.gateJob(side, "pull_request_target") // edited
	f.passChecks(x)
	if g := f.gateOf(x); g.State == "success" {
		t.Fatalf("the gate after the retarget: %+v", g)
	}
	if ok, _ := f.fake.Mergeable(side); ok {
		t.Fatal("docs/VISION.md merges into main on approvals given for another branch")
	}
}

// TestGateResolutionPostedFirst: an agent's token copies the resolution marker for a
// maintainer's /agent approve before the control job reads the asks; the command still lands
// (its own resolution is taken as recorded, and the gate is posted).
func TestGateResolutionPostedFirst(t *testing.T) {
	t.Parallel()
	f := boundary(t)
	p := f.proposeFiles(map[string]string{"docs/VISION.md": "# v\n"})
	n, head, token := p.N, p.Head, f.askToken(p.N)
	body := "/agent approve " + token
	id, err := f.fake.AddComment(n, "ada", body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.fake.AddComment(n, "", "<!-- autonomy:resolution token="+token+" verb=approve by=ada comment="+strconv.FormatInt(id, 10)+" -->\nRecorded."); err != nil {
		t.Fatal(err)
	}
	f.r.job(f.wf("autonomy-control"), "command", f.commentEvent(n, id, "ada", "OWNER", body), false)
	f.passChecks(head)
	if ok, why := f.fake.Mergeable(n); !ok {
		t.Fatalf("the maintainer's approval did not land: %s (gate %+v)", why, f.gateOf(head))
	}
}
