//go:build unix

package effect_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// The merge boundary, attacked through the generated workflows: the real autonomy binary runs
// the propose job, the control workflow's command job and its human-gate job with the commands
// and env the parsed YAML declares, against ghfake over a bare git repository provisioned by
// autonomy provision (so branch protection is the real one). No model runs: the agent's output
// is the bundle its job would export (exportCommitsScript), made here by hand.

// boundary is a repository where profiles/sdlc is installed and provisioned, whose admins (the
// maintainers) are ada and bob, with mallory a writer who is not one.
func boundary(t *testing.T) *fleet {
	return newFleetWith(t, "sdlc", map[string]string{"ada": "admin", "bob": "admin", "mallory": "write"}, "")
}

// work clones the default branch into a working copy of its own.
func (f *fleet) work(name string) string {
	dir := filepath.Join(f.root, name)
	gitRun(f.t, f.root, "clone", "--quiet", f.origin, dir)
	return dir
}

// write writes files under dir and commits them with msg.
func (f *fleet) write(dir, msg string, files map[string]string) {
	f.t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	f.commit(dir, msg)
}

// export bundles dir's commits since the default branch as the agent job does, into run's
// autonomy-propose artifact.
func (f *fleet) export(dir, run string) {
	f.t.Helper()
	out := f.t.TempDir()
	gitRun(f.t, dir, "bundle", "create", filepath.Join(out, "commits.bundle"), "origin/main..HEAD")
	f.r.artifacts[run+"/autonomy-propose"] = out
}

// propose runs develop's propose job for the work item and, when it opened a pull request,
// the human-gate job it dispatched.
func (f *fleet) propose(wantFail bool) string {
	f.t.Helper()
	v := f.values(nil, "workflow_dispatch", map[string]string{"ISSUE": strconv.Itoa(f.item)})
	out, ran := f.r.job(f.wf("develop"), "propose", v, wantFail)
	if !ran {
		f.t.Fatal("the propose job was skipped")
	}
	if !wantFail {
		f.gateDispatched()
	}
	return out
}

// gateDispatched runs the human-gate job of the control workflow's last dispatch, the one
// autonomy gh propose makes for the pull request it opened or updated.
func (f *fleet) gateDispatched() {
	f.t.Helper()
	{
		run := f.dispatched("autonomy-control.yml")
		if run.Inputs[effect.GateInput] == "" || run.Branch != "main" {
			f.t.Fatalf("the human gate was dispatched with %+v", run)
		}
		v := map[string]string{
			"github.token": "ghs_e2e", "github.event_name": "workflow_dispatch", "github.sha": f.mainSHA(), "github.ref": "refs/heads/main",
			"github.event.repository.default_branch": "main", "github.run_id": "6262", "inputs." + effect.GateInput: run.Inputs[effect.GateInput],
		}
		if sweep, ran := f.r.job(f.wf("autonomy-control"), "sweep", v, false); ran {
			f.t.Fatalf("the gate's dispatch swept too:\n%s", sweep)
		}
		if _, ran := f.r.job(f.wf("autonomy-control"), "human-gate", v, false); !ran {
			f.t.Fatal("the dispatched human-gate job was skipped")
		}
	}
}

// proposal is a pull request the propose job opened: its number, as the fake holds it, and the
// commit its branch points at.
type proposal struct {
	N    int
	Head string
	PR   ghfake.Issue
}

// proposeFiles commits files on a checkout of main as the agent would, exports them, runs the
// propose job and the gate it dispatches, and returns the work item's pull request.
func (f *fleet) proposeFiles(files map[string]string) proposal {
	f.t.Helper()
	dir := f.work("agent")
	f.write(dir, "proposal", files)
	f.export(dir, "4242")
	f.propose(false)
	for _, n := range f.fake.Pulls() {
		if is, _ := f.fake.Issue(n); is.Head == effect.BranchPrefix+"develop/"+strconv.Itoa(f.item) {
			return proposal{N: n, PR: is, Head: gitRun(f.t, f.root, "--git-dir", f.origin, "rev-parse", "refs/heads/"+is.Head)}
		}
	}
	f.t.Fatalf("no pull request for #%d: %v", f.item, f.fake.Pulls())
	return proposal{}
}

// askToken is the token of the ask on item n.
func (f *fleet) askToken(n int) string {
	f.t.Helper()
	is, _ := f.fake.Issue(n)
	m := askTokenRe.FindStringSubmatch(strings.Join(is.Comments, "\n"))
	if m == nil {
		f.t.Fatalf("no ask on #%d: %q", n, is.Comments)
	}
	return m[1]
}

// pushOnto commits files on branch, as a person pushing to it, and returns the new head.
func (f *fleet) pushOnto(branch, msg string, files map[string]string) string {
	f.t.Helper()
	dir := f.work("more")
	gitRun(f.t, dir, "checkout", "--quiet", branch)
	f.write(dir, msg, files)
	gitRun(f.t, dir, "push", "--quiet", "origin", "HEAD:"+branch)
	return gitRun(f.t, dir, "rev-parse", "HEAD")
}

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

// branches are the autonomy/ branches of the repository.
func (f *fleet) branches() string {
	return gitRun(f.t, f.root, "--git-dir", f.origin, "branch", "--list", "autonomy/*")
}

// TestProposeRefusesHiddenPaths: the issue's repro (a merge of a side branch that changes a
// workflow and the vision document, on a proposal that otherwise changes docs/innocent.md), an
// evil merge (a merge commit that changes a workflow itself), and a workflow whose name git
// quotes (a byte outside ASCII) are refused by the propose job, saying so on the work item and
// naming what is at fault; nothing is pushed and no pull request opens.
func TestProposeRefusesHiddenPaths(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		build func(f *fleet, dir string)
		want  []string
	}{
		{"merge of a side branch", func(f *fleet, dir string) {
			gitRun(t, dir, "checkout", "--quiet", "-b", "side")
			f.write(dir, "side", map[string]string{".github/workflows/x.yml": "name: x\n", "docs/VISION.md": "# mine now\n"})
			gitRun(t, dir, "checkout", "--quiet", "main")
			f.write(dir, "innocent", map[string]string{"docs/innocent.md": "hello\n"})
			mergeNoCommit(t, dir, "side")
			f.commit(dir, "merge side")
		}, []string{"merge commits"}},
		{"evil merge", func(f *fleet, dir string) {
			gitRun(t, dir, "checkout", "--quiet", "-b", "side")
			f.write(dir, "side", map[string]string{"docs/side.md": "side\n"})
			gitRun(t, dir, "checkout", "--quiet", "main")
			f.write(dir, "innocent", map[string]string{"docs/innocent.md": "hello\n"})
			mergeNoCommit(t, dir, "side")
			f.write(dir, "merge side", map[string]string{".github/workflows/evil.yml": "name: evil\n"})
		}, []string{"merge commits"}},
		{"quoted workflow name", func(f *fleet, dir string) {
			f.write(dir, "unicode", map[string]string{".github/workflows/\u00e9.yml": "name: e\n", "docs/ok.md": "ok\n"})
		}, []string{"changes workflows", ".github/workflows/\u00e9.yml"}},
		{"a workflow changed and changed back", func(f *fleet, dir string) {
			f.write(dir, "add", map[string]string{".github/workflows/tmp.yml": "name: tmp\n"})
			gitRun(t, dir, "rm", "--quiet", ".github/workflows/tmp.yml")
			f.write(dir, "remove", map[string]string{"docs/ok.md": "ok\n"})
		}, []string{"changes workflows", ".github/workflows/tmp.yml"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := boundary(t)
			dir := f.work("agent")
			c.build(f, dir)
			f.export(dir, "4242")
			out := f.propose(true)
			is, _ := f.fake.Issue(f.item)
			if len(is.Comments) != 1 {
				t.Fatalf("the work item's comments: %q\n%s", is.Comments, out)
			}
			for _, w := range c.want {
				if !strings.Contains(is.Comments[0], w) {
					t.Errorf("the refusal does not say %q: %q", w, is.Comments[0])
				}
			}
			if pulls := f.fake.Pulls(); len(pulls) != 0 {
				t.Errorf("pull requests opened: %v", pulls)
			}
			if b := f.branches(); b != "" {
				t.Errorf("branches pushed: %s", b)
			}
		})
	}
}

func mergeNoCommit(t *testing.T, dir, branch string) {
	t.Helper()
	gitRun(t, dir, "-c", "user.name=a", "-c", "user.email=a@x", "merge", "--quiet", "--no-ff", "--no-commit", branch)
}

var askTokenRe = regexp.MustCompile(`autonomy:ask actor=\S+ token=([0-9a-f]{32})`)

// TestHumanGate: a proposal touching a human-required path opens with human-approval pending
// on its head and does not merge on the reviewer's approval and CI alone. A non-maintainer's
// /agent approve is refused; a maintainer's approves that head, and it merges. A new push is a
// new head: it does not merge, the old token approves nothing, and a maintainer's approving
// review of the new head (the human-gate job, on pull_request_review) lets it merge; dismissed,
// the gate is pending again. A proposal with no human-required path has the gate success.
func TestHumanGate(t *testing.T) {
	t.Parallel()
	f := boundary(t)
	p := f.proposeFiles(map[string]string{"docs/VISION.md": "# where we go\n", "docs/notes.md": "n\n"})
	if pulls := f.fake.Pulls(); len(pulls) != 1 {
		t.Fatalf("pull requests: %v", pulls)
	}
	n, head := p.N, p.Head
	if g := f.gateOf(head).State; g != "pending" {
		t.Fatalf("human-approval on the proposal's head is %q, want pending", g)
	}
	f.passChecks(head)
	if ok, why := f.fake.Mergeable(n); ok || !strings.Contains(why, effect.HumanApprovalContext) {
		t.Fatalf("mergeable on the reviewer's approval alone (%v, %s)", ok, why)
	}
	token := f.askToken(n)

	// mallory writes to the repository but is no maintainer.
	f.command(n, "mallory", "MEMBER", "/agent approve "+token, true)
	if g := f.gateOf(head).State; g != "pending" {
		t.Fatalf("a non-maintainer's approval made the gate %q", g)
	}
	f.command(n, "ada", "OWNER", "/agent approve "+token, false)
	if g := f.gateOf(head).State; g != "success" {
		t.Fatalf("after the maintainer's approval the gate is %q", g)
	}
	if ok, why := f.fake.Mergeable(n); !ok {
		t.Fatalf("not mergeable after the maintainer's approval: %s", why)
	}

	// A new push: a new head, which nothing approved.
	newHead := f.pushOnto(p.PR.Head, "more vision", map[string]string{"docs/VISION.md": "# further\n"})
	f.passChecks(newHead)
	f.gateJob(n, "pull_request_target")
	if g := f.gateOf(newHead).State; g != "pending" {
		t.Fatalf("the new head's gate is %q, want pending", g)
	}
	if ok, _ := f.fake.Mergeable(n); ok {
		t.Fatal("the new head merges on the old head's approval")
	}
	// Posting an ask again is the propose job's: the old token is spent, and would be refused
	// for the old head anyway; a review of the new head by a maintainer approves it.
	if _, err := f.fake.AddReview(n, "mallory", "APPROVED"); err != nil {
		t.Fatal(err)
	}
	f.gateJob(n, "pull_request_review")
	if g := f.gateOf(newHead).State; g != "pending" {
		t.Fatalf("a non-maintainer's review made the gate %q", g)
	}
	id, err := f.fake.AddReview(n, "bob", "APPROVED")
	if err != nil {
		t.Fatal(err)
	}
	f.gateJob(n, "pull_request_review")
	if g := f.gateOf(newHead).State; g != "success" {
		t.Fatalf("after bob's approving review the gate is %q", g)
	}
	if ok, why := f.fake.Mergeable(n); !ok {
		t.Fatalf("not mergeable after the maintainer's review: %s", why)
	}
	f.fake.DismissReview(n, id)
	f.gateJob(n, "pull_request_review")
	if g := f.gateOf(newHead).State; g != "pending" {
		t.Fatalf("after the review's dismissal the gate is %q", g)
	}
	if ok, _ := f.fake.Mergeable(n); ok {
		t.Fatal("mergeable on a dismissed review")
	}
}

// TestHumanGateStaleToken: an ask's token approves the head it was posted for only: after a
// new push, /agent approve with it is refused and the gate stays pending.
func TestHumanGateStaleToken(t *testing.T) {
	t.Parallel()
	f := boundary(t)
	p := f.proposeFiles(map[string]string{"docs/VISION.md": "# v\n"})
	n, token := p.N, f.askToken(p.N)
	newHead := f.pushOnto(p.PR.Head, "sneak", map[string]string{"deploy/prod.yml": "replicas: 0\n"})
	out := f.command(n, "ada", "OWNER", "/agent approve "+token, true)
	pr, _ := f.fake.Issue(n)
	if last := pr.Comments[len(pr.Comments)-1]; !strings.Contains(last, "the head of #") {
		t.Errorf("the refusal: %q\n%s", last, out)
	}
	for _, s := range f.fake.Statuses(newHead) {
		if s.Context == effect.HumanApprovalContext && s.State == "success" {
			t.Fatalf("the new head was approved with the old head's token: %+v", s)
		}
	}
}

// TestNoHumanPathGateSuccess: a proposal that touches no human-required path has the gate
// success on its head, so the reviewer and CI suffice.
func TestNoHumanPathGateSuccess(t *testing.T) {
	t.Parallel()
	f := boundary(t)
	p := f.proposeFiles(map[string]string{"greeting.txt": "hello\n"})
	n, pr := p.N, p.PR
	f.passChecks(p.Head)
	if ok, why := f.fake.Mergeable(n); !ok {
		t.Fatalf("not mergeable: %s", why)
	}
	if strings.Contains(strings.Join(pr.Comments, "\n"), "autonomy:ask") {
		t.Errorf("a maintainer was engaged for no human-required path: %q", pr.Comments)
	}
}

// command runs the control workflow's command job on a comment by login on item n.
func (f *fleet) command(n int, login, association, body string, wantFail bool) string {
	f.t.Helper()
	id, err := f.fake.AddComment(n, login, body)
	if err != nil {
		f.t.Fatal(err)
	}
	out, ran := f.r.job(f.wf("autonomy-control"), "command", f.commentEvent(n, id, login, association, body), wantFail)
	if !ran {
		f.t.Fatalf("the command job was skipped for %q", body)
	}
	return out
}

// commentEvent is the values of the issue_comment event of comment id by login on item n.
func (f *fleet) commentEvent(n int, id int64, login, association, body string) map[string]string {
	return map[string]string{
		"github.token": "ghs_e2e", "github.event_name": "issue_comment", "github.event.action": "created", "github.sha": f.mainSHA(),
		"github.ref": "refs/heads/main", "github.event.repository.default_branch": "main", "github.run_id": "5151",
		"github.event.comment.body": body, "github.event.comment.id": strconv.FormatInt(id, 10),
		"github.event.comment.html_url":   "https://github.com/o/r/pull/" + strconv.Itoa(n),
		"github.event.comment.user.login": login, "github.event.comment.user.type": "User",
		"github.event.comment.author_association": association, "github.event.issue.number": strconv.Itoa(n),
	}
}

// gateJob runs the control workflow's human-gate job on event for pull request n.
func (f *fleet) gateJob(n int, event string) string {
	f.t.Helper()
	v := map[string]string{
		"github.token": "ghs_e2e", "github.event_name": event, "github.sha": f.mainSHA(), "github.ref": "refs/heads/main",
		"github.event.repository.default_branch": "main", "github.run_id": "6161", "github.event.pull_request.number": strconv.Itoa(n),
	}
	out, ran := f.r.job(f.wf("autonomy-control"), "human-gate", v, false)
	if !ran {
		f.t.Fatalf("the human-gate job was skipped on %s", event)
	}
	return out
}

func (f *fleet) mainSHA() string {
	return gitRun(f.t, f.root, "--git-dir", f.origin, "rev-parse", "refs/heads/main")
}

// postStatus posts a status through the fake's API, as another check would.
func postStatus(f *fleet, sha, context, state string) error {
	req, err := http.NewRequest("POST", f.fake.URL+"repos/o/r/statuses/"+sha, strings.NewReader(`{"state":"`+state+`","context":"`+context+`"}`))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer ghs_e2e")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("posting %s on %s: %s", context, sha, resp.Status)
	}
	return nil
}
