package effect

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/internal/testfs"
)

// world is a repository on the fake: a bare git repository behind ghfake, the trusted job's
// checkout of it, and a work item.
type world struct {
	t      *testing.T
	root   string
	origin string // the bare repository
	fake   *ghfake.Server
	item   int
}

// run runs args in dir and returns its trimmed output.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return testfs.Run(t, dir, args...)
}

// write writes content to dir/name.
func write(t *testing.T, dir, name, content string) {
	t.Helper()
	testfs.WriteFile(t, dir, name, content)
}

func newWorld(t *testing.T) *world {
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "bot", "GIT_AUTHOR_EMAIL": "bot@example.com", "GIT_COMMITTER_NAME": "bot",
		"GIT_COMMITTER_EMAIL": "bot@example.com", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"} {
		t.Setenv(k, v)
	}
	w := &world{t: t, root: t.TempDir()}
	w.origin = filepath.Join(w.root, "origin.git")
	run(t, w.root, "git", "init", "--quiet", "--bare", "--initial-branch=main", w.origin)
	seed := filepath.Join(w.root, "seed")
	run(t, w.root, "git", "clone", "--quiet", w.origin, seed)
	for name, content := range map[string]string{"src/a.go": "package a\n", "docs/ROADMAP.md": "# roadmap\n", "docs/VISION.md": "# vision\n", ".github/workflows/x.yml": "name: x\n"} {
		write(t, seed, name, content)
	}
	run(t, seed, "git", "add", "-A")
	run(t, seed, "git", "commit", "--quiet", "-m", "seed")
	run(t, seed, "git", "push", "--quiet", "origin", "HEAD:main")
	fake, err := ghfake.New(ghfake.Options{Token: "tok", GitDir: w.origin, Workflows: map[string]ghfake.Workflow{
		"reviewer.yml":  {Dispatch: true, Inputs: []string{"PR", ghfake.CorrelationInput}},
		"ci.yml":        {Dispatch: true},
		"develop.yml":   {Dispatch: true, Inputs: []string{"ISSUE", "WHO", "ROLE", "NOTE", ghfake.CorrelationInput}, RunName: "develop [{0}]"}, // apply_test.go launches it
		ControlWorkflow: {Dispatch: true, Inputs: []string{GateInput}},
	}, Collaborators: map[string]string{"ada": "admin", "bob": "admin", "dev": "write"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	w.fake = fake
	w.item = fake.AddIssue("add a feature", "")
	return w
}

// deleted, as a file's content in agentBundle, removes the file.
const deleted = "\x00deleted"

// agentBundle is what the agent job exports: the commits an agent makes on a checkout of main,
// bundled from the checked-out commit.
func (w *world) agentBundle(files map[string]string) string {
	t := w.t
	dir, err := os.MkdirTemp(w.root, "agent-")
	if err != nil {
		t.Fatal(err)
	}
	run(t, w.root, "git", "clone", "--quiet", w.origin, dir)
	base := run(t, dir, "git", "rev-parse", "HEAD")
	for name, content := range files {
		if content == deleted {
			run(t, dir, "git", "rm", "--quiet", name)
			continue
		}
		write(t, dir, name, content)
	}
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "commit", "--quiet", "-m", "agent: change "+strings.Join(keys(files), ", "))
	b := filepath.Join(dir, "commits.bundle")
	run(t, dir, "git", "bundle", "create", "--quiet", b, base+"..HEAD")
	return b
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// env is the trusted job's environment, with a fresh checkout of main.
func (w *world) env(actor string) *Env {
	t := w.t
	dir, err := os.MkdirTemp(w.root, "job-")
	if err != nil {
		t.Fatal(err)
	}
	run(t, w.root, "git", "clone", "--quiet", w.origin, dir)
	client := github.NewClient(nil).WithAuthToken("tok")
	client.BaseURL, _ = url.Parse(w.fake.URL)
	e := &Env{Client: client, Owner: "o", Repo: "r", Remote: w.origin, Dir: dir, Actor: actor, Subject: "1",
		ReviewerWorkflow: "reviewer.yml", ReviewerInput: "PR", RunURL: "https://github.com/o/r/actions/runs/7", Out: io.Discard,
		HumanPaths: []string{".github/workflows/**", "docs/VISION.md"}}
	e.Policy.Box.TaskStates = map[string]string{"in-review": "review-me", "input-required": "needs-input"}
	return e
}

func (w *world) lastComment(n int) string {
	is, _ := w.fake.Issue(n)
	if len(is.Comments) == 0 {
		return ""
	}
	return is.Comments[len(is.Comments)-1]
}

func (w *world) branch(name string) string {
	out, err := exec.Command("git", "--git-dir", w.origin, "rev-parse", "--verify", "--quiet", "refs/heads/"+name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// verdict writes a verdict file for sha.
func (w *world) verdict(sha, verdict string) string {
	p := filepath.Join(w.root, "verdict-"+sha[:7]+".json")
	write(w.t, w.root, filepath.Base(p), `{"verdict": "`+verdict+`", "summary": "reads well", "headSha": "`+sha+`"}`)
	return p
}

// TestProposeThenReview: a proposal becomes a labelled pull request whose reviewer is
// dispatched; the review of its head posts agent-review there, which makes it mergeable under
// protection; a verdict for an older head is discarded; a second proposal updates the same PR.
func TestProposeThenReview(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	e := w.env("develop")
	p, err := Propose(ctx, e, w.agentBundle(map[string]string{"src/a.go": "package a\n\nfunc A() {}\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Created || p.Branch != "autonomy/develop/1" || w.branch(p.Branch) == "" {
		t.Fatalf("proposal %+v; branch %q", p, w.branch(p.Branch))
	}
	pr, _ := w.fake.Issue(p.PR)
	if pr.Base != "main" || !strings.Contains(pr.Body, "#1") || !strings.Contains(pr.Body, "develop") || !strings.Contains(pr.Body, e.RunURL) {
		t.Errorf("pull request %+v does not link the work item, actor and run", pr)
	}
	if strings.Join(pr.Labels, ",") != "review-me" {
		t.Errorf("labels %v, want the tracker's in-review name only", pr.Labels)
	}
	runs := w.fake.Runs()
	slices.SortFunc(runs, func(a, b ghfake.Run) int { return strings.Compare(a.Workflow, b.Workflow) })
	if len(runs) != 2 || runs[1].Workflow != "reviewer.yml" || runs[1].Inputs["PR"] != "2" || runs[1].Branch != "main" ||
		runs[0].Workflow != ControlWorkflow || runs[0].Inputs[GateInput] != "2" || runs[0].Branch != "main" {
		t.Errorf("dispatched %+v, want the human gate and the reviewer on main with the pull request 2", runs)
	}

	head := w.branch(p.Branch)
	w.fake.Protect("main", ghfake.Protection{Contexts: []string{StatusContext}, Strict: true})
	if ok, _ := w.fake.Mergeable(p.PR); ok {
		t.Fatal("mergeable before any review")
	}
	re := w.env("reviewer")
	re.Subject = "2"
	v, err := Review(ctx, re, w.verdict(head, "approve"))
	if err != nil {
		t.Fatal(err)
	}
	if v.State != "success" || len(w.fake.Statuses(head)) != 1 {
		t.Fatalf("verdict %+v, statuses %+v", v, w.fake.Statuses(head))
	}
	if ok, why := w.fake.Mergeable(p.PR); !ok {
		t.Fatalf("not mergeable after the review: %s", why)
	}
	if pr, _ := w.fake.Issue(p.PR); len(pr.Reviews) != 1 || !strings.Contains(pr.Reviews[0], "reads well") {
		t.Errorf("review comments %v", pr.Reviews)
	}

	// The proposer pushes again: the same pull request, a new head; the old verdict is stale.
	p2, err := Propose(ctx, w.env("develop"), w.agentBundle(map[string]string{"src/a.go": "package a\n\nfunc B() {}\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if p2.Created || p2.PR != p.PR || len(w.fake.Pulls()) != 1 {
		t.Fatalf("second proposal %+v; pulls %v", p2, w.fake.Pulls())
	}
	newHead := w.branch(p.Branch)
	v, err = Review(ctx, re, w.verdict(head, "approve"))
	if err != nil || !v.Stale {
		t.Fatalf("stale verdict: %+v, %v", v, err)
	}
	if len(w.fake.Statuses(newHead)) != 0 {
		t.Errorf("a stale verdict posted %+v", w.fake.Statuses(newHead))
	}
	if !strings.Contains(w.lastComment(p.PR), "discarded") {
		t.Errorf("no note on the pull request: %q", w.lastComment(p.PR))
	}
	if ok, _ := w.fake.Mergeable(p.PR); ok {
		t.Error("the new head is mergeable without a review")
	}
}

// TestProposeAutoMerge: auto-merge is armed where the repository allows it and the base is
// protected; elsewhere the pull request stands and the output says why it is not armed.
func TestProposeAutoMerge(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	p, err := Propose(ctx, w.env("develop"), w.agentBundle(map[string]string{"src/a.go": "package one\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if p.AutoMerge || !strings.Contains(p.AutoMergeError, "Auto merge is not allowed") || w.fake.AutoMerge(p.PR) {
		t.Errorf("armed without the setting: %+v", p)
	}
	w.fake.SetSettings(ghfake.Settings{AllowAutoMerge: true})
	w.fake.Protect("main", ghfake.Protection{Contexts: []string{StatusContext}})
	p, err = Propose(ctx, w.env("develop"), w.agentBundle(map[string]string{"src/a.go": "package two\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if !p.AutoMerge || !w.fake.AutoMerge(p.PR) {
		t.Errorf("not armed: %+v", p)
	}
}

// TestProposeSigned: with commit_signing: verified-api the commits are created through the Git
// Data API (GitHub signs them), with the proposal's trees, messages and authors.
func TestProposeSigned(t *testing.T) {
	w := newWorld(t)
	e := w.env("develop")
	e.Policy.Box.GHActions.CommitSigning = SigningVerifiedAPI
	bundle := w.agentBundle(map[string]string{"src/a.go": "package signed\n", "docs/ROADMAP.md": deleted, "new/file.txt": "x\n"})
	p, err := Propose(context.Background(), e, bundle)
	if err != nil {
		t.Fatal(err)
	}
	head := w.branch(p.Branch)
	if !p.Signed || !w.fake.Verified(head) {
		t.Fatalf("%+v: head %s not created through the API", p, head)
	}
	local := run(t, e.Dir, "git", "rev-parse", "refs/autonomy/proposed^{tree}")
	if got := run(t, w.root, "git", "--git-dir", w.origin, "rev-parse", head+"^{tree}"); got != local {
		t.Errorf("the signed head's tree %s differs from the proposal's %s", got, local)
	}
	if got := run(t, w.root, "git", "--git-dir", w.origin, "log", "-1", "--format=%an %s", head); !strings.HasPrefix(got, "bot agent: change") {
		t.Errorf("author and message: %q", got)
	}
	// A second proposal moves the branch (force) onto new signed commits.
	e2 := w.env("develop")
	e2.Policy.Box.GHActions.CommitSigning = SigningVerifiedAPI
	if _, err := Propose(context.Background(), e2, w.agentBundle(map[string]string{"src/a.go": "package again\n"})); err != nil {
		t.Fatal(err)
	}
	if h := w.branch(p.Branch); h == head || !w.fake.Verified(h) {
		t.Errorf("the branch did not move to a signed commit: %s", h)
	}
}

// TestProposeScheduled: a proposer without a work item (the strategist's cron) keeps one standing
// pull request on autonomy/<actor>/scheduled; a refusal is said in the log only.
func TestProposeScheduled(t *testing.T) {
	w := newWorld(t)
	e := w.env("strategist")
	e.Subject, e.Scope = "", "docs/ROADMAP.md"
	p, err := Propose(context.Background(), e, w.agentBundle(map[string]string{"docs/ROADMAP.md": "# q3\n"}))
	if err != nil {
		t.Fatal(err)
	}
	pr, _ := w.fake.Issue(p.PR)
	if p.Branch != "autonomy/strategist/scheduled" || strings.Contains(pr.Body, "Work item") {
		t.Errorf("%+v, body %q", p, pr.Body)
	}
	var log strings.Builder
	e2 := w.env("strategist")
	e2.Subject, e2.Scope, e2.Out = "", "docs/ROADMAP.md", &log
	_, err = Propose(context.Background(), e2, w.agentBundle(map[string]string{"src/a.go": "package x\n"}))
	var r *Refused
	if !errors.As(err, &r) || !strings.Contains(log.String(), "`src/a.go`") {
		t.Errorf("err %v, log %q", err, log.String())
	}
}

// TestProposeRefuses: each change a proposer may not make is refused with a comment on the
// work item naming the files, and nothing is pushed.
func TestProposeRefuses(t *testing.T) {
	cases := []struct {
		name  string
		scope string
		files map[string]string
		// moved is a change pushed to main after the agent's checkout.
		moved map[string]string
		want  []string
	}{
		{"outside its scope", "docs/ROADMAP.md", map[string]string{"docs/ROADMAP.md": "# next\n", "src/a.go": "package b\n"}, nil, []string{"docs/ROADMAP.md only", "`src/a.go`"}},
		{"a workflow", "", map[string]string{".github/workflows/x.yml": "name: y\n"}, nil, []string{"changes workflows", "`.github/workflows/x.yml`"}},
		{"a new workflow", "", map[string]string{".github/workflows/new.yml": "name: y\n"}, nil, []string{"`.github/workflows/new.yml`"}},
		{"does not apply", "", map[string]string{"src/a.go": "package agent\n"}, map[string]string{"src/a.go": "package human\n"}, []string{"does not apply to the current main", "`src/a.go`"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			bundle := w.agentBundle(c.files)
			if c.moved != nil {
				dir := filepath.Join(w.root, "human")
				run(t, w.root, "git", "clone", "--quiet", w.origin, dir)
				for n, content := range c.moved {
					write(t, dir, n, content)
				}
				run(t, dir, "git", "commit", "--quiet", "-am", "human")
				run(t, dir, "git", "push", "--quiet", "origin", "HEAD:main")
			}
			e := w.env("develop")
			e.Scope = c.scope
			_, err := Propose(context.Background(), e, bundle)
			var r *Refused
			if !errors.As(err, &r) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			note := w.lastComment(w.item)
			for _, want := range c.want {
				if !strings.Contains(note, want) {
					t.Errorf("the note on the work item lacks %q:\n%s", want, note)
				}
			}
			if b := w.branch("autonomy/develop/1"); b != "" || len(w.fake.Pulls()) != 0 {
				t.Errorf("pushed %s / opened %v anyway", b, w.fake.Pulls())
			}
		})
	}
}

// TestProposeRebases: a change that applies to a default branch that moved on is put on top of it.
func TestProposeRebases(t *testing.T) {
	w := newWorld(t)
	bundle := w.agentBundle(map[string]string{"src/b.go": "package a\n"})
	dir := filepath.Join(w.root, "human")
	run(t, w.root, "git", "clone", "--quiet", w.origin, dir)
	write(t, dir, "docs/ROADMAP.md", "# moved\n")
	run(t, dir, "git", "commit", "--quiet", "-am", "human")
	run(t, dir, "git", "push", "--quiet", "origin", "HEAD:main")
	p, err := Propose(context.Background(), w.env("develop"), bundle)
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("git", "--git-dir", w.origin, "merge-base", "--is-ancestor", "main", p.Branch).Run(); err != nil {
		t.Errorf("the branch is not on top of the current main: %v", err)
	}
}

// TestProposeHumanRequired: touching a human-required path adds the input-required label.
func TestProposeHumanRequired(t *testing.T) {
	w := newWorld(t)
	p, err := Propose(context.Background(), w.env("strategist"), w.agentBundle(map[string]string{"docs/VISION.md": "# new vision\n"}))
	if err != nil {
		t.Fatal(err)
	}
	pr, _ := w.fake.Issue(p.PR)
	if strings.Join(pr.Labels, ",") != "review-me,needs-input" {
		t.Errorf("labels %v", pr.Labels)
	}
	// No human actor routed: the maintainers (the admins, no variable set) are engaged
	// directly: the ask on the pull request mentions them, they are assigned and asked to review.
	if p.Engaged == nil || p.Engaged.Actor != MaintainersActor {
		t.Fatalf("engaged %+v, want the maintainers", p.Engaged)
	}
	ask := w.lastComment(p.PR)
	if p.Engaged.Head == "" || p.Engaged.Head != w.branch(p.Branch) {
		t.Errorf("the ask is bound to %q, want the head pushed %q", p.Engaged.Head, w.branch(p.Branch))
	}
	for _, want := range []string{"<!-- autonomy:ask actor=maintainers token=" + p.Engaged.Token, " head=" + p.Engaged.Head + " -->", "@ada @bob", "docs/VISION.md", "/agent approve " + p.Engaged.Token} {
		if !strings.Contains(ask, want) {
			t.Errorf("the ask lacks %q:\n%s", want, ask)
		}
	}
	if a := w.fake.Assignees(p.PR); strings.Join(a, ",") != "ada,bob" {
		t.Errorf("assignees %v", a)
	}
	if r := w.fake.RequestedReviewers(p.PR); strings.Join(r, ",") != "ada,bob" {
		t.Errorf("review requested of %v", r)
	}

	// A profile routing input-required to a human actor: that actor is engaged.
	e := w.env("develop")
	e.InputActor = "maintainer"
	p, err = Propose(context.Background(), e, w.agentBundle(map[string]string{".github/CODEOWNERS.md": "x\n", "docs/VISION.md": "# v2\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if p.Engaged == nil || p.Engaged.Actor != "maintainer" || !strings.Contains(w.lastComment(p.PR), "<!-- autonomy:ask actor=maintainer token=") {
		t.Errorf("engaged %+v:\n%s", p.Engaged, w.lastComment(p.PR))
	}
	// A change outside the human-required paths engages nobody.
	p, err = Propose(context.Background(), w.env("other"), w.agentBundle(map[string]string{"src/z.go": "package z\n"}))
	if err != nil || p.Engaged != nil || len(w.fake.Assignees(p.PR)) != 0 {
		t.Errorf("engaged %+v on a plain change (%v)", p, err)
	}
}

// TestProposeCap: at max_open_agent_prs the branch is kept, nothing is opened, and the work
// item says so.
func TestProposeCap(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if _, err := Propose(ctx, w.env("develop"), w.agentBundle(map[string]string{"src/a.go": "package one\n"})); err != nil {
		t.Fatal(err)
	}
	e := w.env("other")
	e.Policy.Box.MaxOpenAgentPRs = 1
	p, err := Propose(ctx, e, w.agentBundle(map[string]string{"src/c.go": "package c\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Capped || p.PR != 0 || len(w.fake.Pulls()) != 1 || w.branch("autonomy/other/1") == "" {
		t.Errorf("capped proposal %+v, pulls %v, branch %q", p, w.fake.Pulls(), w.branch("autonomy/other/1"))
	}
	if !strings.Contains(w.lastComment(w.item), "max_open_agent_prs") {
		t.Errorf("the work item does not say so: %q", w.lastComment(w.item))
	}
}

// TestProposeNothing: no bundle (the agent made no commits) is not an error and does nothing.
func TestProposeNothing(t *testing.T) {
	w := newWorld(t)
	p, err := Propose(context.Background(), w.env("develop"), filepath.Join(w.root, "absent.bundle"))
	if err != nil || p != nil || len(w.fake.Pulls()) != 0 {
		t.Fatalf("%+v, %v", p, err)
	}
}

// TestReviewRefuses: a verdict that fails the contract, or no verdict, posts nothing.
func TestReviewRefuses(t *testing.T) {
	w, head, re := proposed(t)
	ctx := context.Background()
	for name, content := range map[string]string{
		"no summary":  `{"verdict": "approve", "headSha": "` + head + `"}`,
		"bad verdict": `{"verdict": "lgtm", "summary": "ok", "headSha": "` + head + `"}`,
		"not json":    `approve`,
		"empty":       ``,
	} {
		f := filepath.Join(w.root, strings.ReplaceAll(name, " ", "-")+".json")
		write(t, w.root, filepath.Base(f), content)
		_, err := Review(ctx, re, f)
		var r *Refused
		if !errors.As(err, &r) {
			t.Errorf("%s: err = %v, want a refusal", name, err)
		}
	}
	// A subject that is an issue, not a pull request (a reviewer fired by an issue comment).
	re.Subject = strconv.Itoa(w.item)
	_, err := Review(ctx, re, w.verdict(head, "approve"))
	var r *Refused
	if !errors.As(err, &r) || !strings.Contains(r.Reason, "is not a pull request") {
		t.Errorf("a verdict for an issue: %v", err)
	}
	if st := w.fake.Statuses(head); len(st) != 0 {
		t.Errorf("statuses posted: %+v", st)
	}
}

// TestMaxOpenAgentPRsReadsTheReferenceSpelling: the reference's profiles set the cap in
// policy.box.autonomy; the top-level key wins when both are set.
func TestMaxOpenAgentPRsReadsTheReferenceSpelling(t *testing.T) {
	for doc, want := range map[string]int{
		`{"box":{"autonomy":{"max_open_agent_prs":2}}}`:                        2,
		`{"box":{"max_open_agent_prs":3,"autonomy":{"max_open_agent_prs":2}}}`: 3,
		`{"box":{}}`: 0,
	} {
		var p Policy
		if err := json.Unmarshal([]byte(doc), &p); err != nil {
			t.Fatal(err)
		}
		if got := p.maxOpenAgentPRs(); got != want {
			t.Errorf("%s: cap %d, want %d", doc, got, want)
		}
	}
}

// TestGoverningDocumentsGated: the governing documents are a list of their own beside
// policy.box.risk.human_required_paths (kept verbatim), read from the gate's file, and a change
// to one needs a maintainer as a human-required path does.
func TestGoverningDocumentsGated(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "paths.json", `{"human_required_paths": [".github/workflows/**"], "governing_documents": ["docs/VISION.md"]}`)
	vars := map[string]string{"GITHUB_REPOSITORY": "o/r", "GH_TOKEN": "t", "AUTONOMY_HUMAN_REQUIRED_PATHS": filepath.Join(dir, "paths.json")}
	e, err := FromEnv(func(k string) string { return vars[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(e.HumanPaths, ",") != ".github/workflows/**" || strings.Join(e.GoverningDocs, ",") != "docs/VISION.md" {
		t.Fatalf("read %q and %q", e.HumanPaths, e.GoverningDocs)
	}
	w := newWorld(t)
	env := w.env("strategist")
	env.HumanPaths, env.GoverningDocs = []string{".github/workflows/**"}, []string{"docs/VISION.md"}
	p, err := Propose(context.Background(), env, w.agentBundle(map[string]string{"docs/VISION.md": "# new vision\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.HumanRequired, ",") != "docs/VISION.md" || p.Engaged == nil {
		t.Fatalf("a change to a governing document: human-required %v, engaged %+v", p.HumanRequired, p.Engaged)
	}
	if ask := w.lastComment(p.PR); !strings.Contains(ask, "or the governing documents") {
		t.Errorf("the ask does not name the governing documents:\n%s", ask)
	}
}
