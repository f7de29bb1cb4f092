//go:build unix

package effect_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// The attacks an independent review found on the human gate, each replayed through the
// generated workflows: every one merged a human-required change with no maintainer before the
// fix.

// gateOf is the newest human-approval status of sha ("" when none).
func (f *fleet) gateOf(sha string) effectStatus {
	var st effectStatus
	for _, s := range f.fake.Statuses(sha) {
		if s.Context == effect.HumanApprovalContext {
			st = effectStatus{s.State, s.Description}
		}
	}
	return st
}

type effectStatus struct{ State, Description string }

// passChecks posts ci and agent-review success on sha, as CI and the reviewer would.
func (f *fleet) passChecks(sha string) {
	f.t.Helper()
	for _, ctx := range []string{"ci", effect.StatusContext} {
		if err := postStatus(f, sha, ctx, "success"); err != nil {
			f.t.Fatal(err)
		}
	}
}

// TestGateReplayedApproval: an agent holding issues: write and actions: write (pm's model job)
// edits the ask's head= to a new head it pushed, deletes the bot's resolution, and re-runs the
// control run of the maintainer's old /agent approve (the same event payload): the edited ask is
// refused and the new head stays unapproved.
func TestGateReplayedApproval(t *testing.T) {
	f := boundary(t)
	dir := f.work("agent")
	f.write(dir, "vision", map[string]string{"docs/VISION.md": "# benign\n"})
	f.export(dir, "4242")
	f.propose(false)
	n := f.fake.Pulls()[0]
	pr, _ := f.fake.Issue(n)
	token := askTokenRe.FindStringSubmatch(strings.Join(pr.Comments, "\n"))[1]
	f.command(n, "ada", "OWNER", "/agent approve "+token, false)
	pr, _ = f.fake.Issue(n)
	var cmdID int64
	for i, b := range pr.Comments {
		if b == "/agent approve "+token {
			cmdID = pr.CommentIDs[i]
		}
	}
	more := f.work("more")
	gitRun(t, more, "checkout", "--quiet", pr.Head)
	f.write(more, "evil", map[string]string{"docs/VISION.md": "# evil\n"})
	gitRun(t, more, "push", "--quiet", "origin", "HEAD:"+pr.Head)
	newHead := gitRun(t, more, "rev-parse", "HEAD")
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
	v := map[string]string{
		"github.token": "ghs_e2e", "github.event_name": "issue_comment", "github.event.action": "created", "github.sha": f.mainSHA(),
		"github.ref": "refs/heads/main", "github.event.repository.default_branch": "main", "github.run_id": "5151",
		"github.event.comment.body": "/agent approve " + token, "github.event.comment.id": strconv.FormatInt(cmdID, 10),
		"github.event.comment.user.login": "ada", "github.event.comment.user.type": "User",
		"github.event.comment.author_association": "OWNER", "github.event.issue.number": strconv.Itoa(n),
	}
	out, _ := f.r.job(f.wf("autonomy-control"), "command", v, true)
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
	f := boundary(t)
	dir := f.work("agent")
	f.write(dir, "deploy", map[string]string{"deploy/prod.yml": "replicas: 0\n"})
	f.export(dir, "4242")
	f.propose(false)
	n := f.fake.Pulls()[0]
	pr, _ := f.fake.Issue(n)
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
	f := boundary(t)
	dir := f.work("agent")
	f.write(dir, "P", map[string]string{"deploy/prod.yml": "replicas: 0\n"})
	f.export(dir, "4242")
	f.propose(false)
	f.write(dir, "H", map[string]string{"README.benign": "hi\n"})
	h := gitRun(t, dir, "rev-parse", "HEAD")
	gitRun(t, dir, "push", "--quiet", "origin", "HEAD:refs/heads/fork-h")
	req, _ := http.NewRequest("POST", f.fake.URL+"repos/o/r/pulls", strings.NewReader(`{"title":"x","head":"fork-h","base":"autonomy/develop/1"}`))
	req.Header.Set("Authorization", "Bearer ghs_e2e")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var side struct{ Number int }
	err = json.NewDecoder(resp.Body).Decode(&side)
	resp.Body.Close()
	if err != nil || side.Number == 0 {
		t.Fatalf("opening the side pull request: %v (%s)", err, resp.Status)
	}
	if out := f.gateJob(side.Number, "pull_request_target"); !strings.Contains(out, "not the default branch") {
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
