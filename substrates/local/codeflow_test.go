//go:build unix

package local

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// flowFleet proposes what $AUTONOMY_DIR/change says (a path, then its content) and reviews as
// $AUTONOMY_DIR/verdict says: approve, reject, stale (a verdict on the head's parent), moved or
// conflict (a person commits to main meanwhile), or rename (a person renames notes/draft.md to
// the human-required docs/VISION.md on main meanwhile).
var flowFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  develop:
    behavior: scripts/develop.sh
    capabilities: [code:propose]
    review: reviewer
    execution: { workspace: isolated }
    triggers: [{ dispatch: true, params: { ITEM: subject.ref } }]
  scoped:
    behavior: scripts/develop.sh
    capabilities: [code:propose@src/**]
    review: reviewer
    execution: { workspace: isolated }
    triggers: [{ dispatch: true }]
  reviewer:
    behavior: scripts/review.sh
    capabilities: [code:review]
    result: { schema: autonomy.review.v1 }
    triggers: [{ dispatch: true, params: { ROLE: subject.actorRole, WHO: subject.actor } }]
  maintainer:
    kind: human
    behavior: humans/maintainer.md
    capabilities: [code:review]
    triggers: [{ dispatch: true }]
policy:
  box:
    risk: { human_required_paths: [docs/VISION.md] }
`,
	files: map[string]string{
		"scripts/develop.sh": `#!/bin/sh
set -e
export GIT_AUTHOR_NAME=develop GIT_AUTHOR_EMAIL=d@example.com GIT_COMMITTER_NAME=develop GIT_COMMITTER_EMAIL=d@example.com
path=$(sed -n 1p "$AUTONOMY_DIR/change")
mkdir -p "$(dirname "$path")"
sed -n '2,$p' "$AUTONOMY_DIR/change" > "$path"
git add -- "$path"
git commit -qm "Change $path"
` + scriptDone,
		"scripts/review.sh": `#!/bin/sh
set -e
head=$(git rev-parse HEAD)
printf '%s %s\n' "$ROLE" "$WHO" > "$AUTONOMY_DIR/reviewer-params"
case $(cat "$AUTONOMY_DIR/verdict") in
  approve) v=approve ;;
  reject) v=request-changes ;;
  stale) v=approve; head=$(git rev-parse HEAD~1) ;;
  moved|conflict)
    v=approve
    export GIT_AUTHOR_NAME=p GIT_AUTHOR_EMAIL=p@example.com GIT_COMMITTER_NAME=p GIT_COMMITTER_EMAIL=p@example.com
    path=$(sed -n 1p "$AUTONOMY_DIR/change")
    [ "$(cat "$AUTONOMY_DIR/verdict")" = moved ] && path=$path.other
    mkdir -p "$AUTONOMY_DIR/$(dirname "$path")"
    echo "from a person" > "$AUTONOMY_DIR/$path"
    git -C "$AUTONOMY_DIR" add -- "$path"
    git -C "$AUTONOMY_DIR" commit -qm "a person's change" ;;
  rename)
    v=approve
    export GIT_AUTHOR_NAME=p GIT_AUTHOR_EMAIL=p@example.com GIT_COMMITTER_NAME=p GIT_COMMITTER_EMAIL=p@example.com
    mkdir -p "$AUTONOMY_DIR/docs"
    git -C "$AUTONOMY_DIR" mv notes/draft.md docs/VISION.md
    git -C "$AUTONOMY_DIR" commit -qm "the draft becomes the vision" ;;
esac
printf '{"verdict":"%s","summary":"looked","headSha":"%s"}\n' "$v" "$head" > "$AUTONOMY_RESULT"
`,
		"humans/maintainer.md": "# Approve changes to human-required paths\n",
	},
}

// flowRig is an installation of flowFleet in a git repository on main, with its runner.
type flowRig struct {
	t   *testing.T
	dir string
	r   *Runner
}

func newFlowRig(t *testing.T) *flowRig { return newFlowRigOf(t, flowFleet) }

func newFlowRigOf(t *testing.T, f fleet) *flowRig {
	dir := installFleet(t, f, true)
	// The installation is committed, as a user would: the worktrees then hold it.
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-qm", "install")
	return &flowRig{t: t, dir: dir, r: newRunner(t, dir, Options{})}
}

func (g *flowRig) set(name, content string) {
	g.t.Helper()
	if err := os.WriteFile(filepath.Join(g.dir, name), []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
}

// propose runs actor, changing path to content, and returns its proposal once it settled
// (merged or refused) or waits for a person.
func (g *flowRig) propose(actor, path, content, verdict string) store.Proposal {
	g.t.Helper()
	g.set("change", path+"\n"+content+"\n")
	g.set("verdict", verdict+"\n")
	s := launch(g.t, g.r, LaunchRequest{Actor: actor, Ref: "42"})
	if got := waitEnded(g.t, g.r, s.ID); got.Status != ir.Done {
		g.t.Fatalf("%s ended %s: %s", actor, got.Status, got.Reason)
	}
	return g.settled(s.ID)
}

func (g *flowRig) settled(session string) store.Proposal {
	g.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		p, ok, err := g.r.Store.ProposalOf(ctx, session)
		if err != nil {
			g.t.Fatal(err)
		}
		if ok && (p.State == store.ProposalMerged || p.State == store.ProposalRefused || p.Ask != "") {
			return p
		}
		time.Sleep(20 * time.Millisecond)
	}
	p, _, _ := g.r.Store.ProposalOf(ctx, session)
	g.t.Fatalf("the proposal of %s did not settle: %+v", session, p)
	return p
}

func (g *flowRig) main() string { return gitRun(g.t, g.dir, "rev-parse", "main") }

// An approved proposal merges into main, by the runner, and the checkout of main follows; a
// verdict on another head merges nothing.
func TestCodeFlowMergesOnlyAnApprovalOfItsHead(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	before := g.main()
	p := g.propose("develop", "src/greet.txt", "hello", "approve")
	if p.State != store.ProposalMerged || p.Merged != p.Head || g.main() != p.Head {
		t.Fatalf("an approved proposal on an unmoved main: %+v (main %s)", p, g.main())
	}
	if gitRun(t, g.dir, "merge-base", "--is-ancestor", before, "main") != "" || readFile(t, filepath.Join(g.dir, "src/greet.txt")) != "hello\n" {
		t.Fatal("main's checkout does not hold the merged change")
	}
	// The reviewer the runner launched acts for the proposer, as a session's launch would.
	if got := readFile(t, filepath.Join(g.dir, "reviewer-params")); got != "NONE develop\n" {
		t.Errorf("the reviewer's ROLE and WHO: %q", got)
	}
	rs, _, _ := g.r.Store.Get(context.Background(), p.Reviewer)
	if rs.Branch != p.Branch || !strings.Contains(rs.Params["ROLE"], "NONE") {
		t.Errorf("the reviewer ran on %q with %v, want the proposal's branch %s", rs.Branch, rs.Params, p.Branch)
	}

	at := g.main()
	p = g.propose("develop", "src/second.txt", "two", "stale")
	if p.State != store.ProposalRefused || !strings.Contains(p.Reason, "stale verdict") || g.main() != at {
		t.Fatalf("a stale verdict: %+v (main %s, was %s)", p, g.main(), at)
	}
	p = g.propose("develop", "src/third.txt", "three", "reject")
	if p.State != store.ProposalRefused || !strings.Contains(p.Reason, `did not approve (verdict "request-changes")`) || g.main() != at {
		t.Fatalf("a rejection: %+v", p)
	}
}

// The checks of gh propose hold on local: the workflows, the installation, the scope.
func TestCodeFlowRefusesWhatNoAgentMayChange(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	at := g.main()
	for _, c := range []struct{ actor, path, want string }{
		{"develop", ".github/workflows/x.yml", "it changes workflows"},
		{"develop", ".autonomy/local/runner.json", "it changes the installation"},
		{"scoped", "docs/readme.md", "scoped may propose changes to src/** only, and it changes: docs/readme.md"},
	} {
		p := g.propose(c.actor, c.path, "x", "approve")
		if p.State != store.ProposalRefused || !strings.Contains(p.Reason, c.want) || p.Reviewer != "" {
			t.Errorf("%s changing %s: %+v, want refused before review: %s", c.actor, c.path, p, c.want)
		}
	}
	if g.main() != at {
		t.Fatal("a refused proposal moved main")
	}
}

// A change to a human-required path merges only once a maintainer redeemed the ask.
func TestCodeFlowWaitsForTheMaintainer(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	at := g.main()
	p := g.propose("develop", "docs/VISION.md", "a new vision", "approve")
	if p.State != store.ProposalApproved || p.Ask == "" || g.main() != at {
		t.Fatalf("before the maintainer: %+v", p)
	}
	// Time and ticks merge nothing.
	if _, err := g.r.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g.main() != at {
		t.Fatal("main moved without the maintainer")
	}
	// The proposer's log says how the operator approves, and holds no token.
	logged := sessionLogOf(g.r, p.Session)
	if strings.Contains(logged, "atk_") || !strings.Contains(logged, "autonomy runner update "+p.Ask+" --new-token") {
		t.Fatalf("the proposer's log does not say how to approve, or holds a token:\n%s", logged)
	}
	token, err := g.r.NewAskToken(context.Background(), p.Ask)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.r.Update(context.Background(), p.Ask, ir.Patch{Status: ir.Done, Token: token, Evidence: "read the diff"}); err != nil {
		t.Fatal(err)
	}
	p, _, _ = g.r.Store.ProposalOf(context.Background(), p.Session)
	if p.State != store.ProposalMerged || g.main() != p.Head {
		t.Fatalf("after the maintainer: %+v", p)
	}
}

// A target that moved is merged with a merge commit the runner makes, or refused on conflict.
func TestCodeFlowTargetMoved(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	// The reviewer moves main itself before approving, as a person committing meanwhile would.
	p := g.propose("develop", "src/a.txt", "from the agent", "moved")
	if p.State != store.ProposalMerged || p.Merged == p.Head || g.main() != p.Merged {
		t.Fatalf("a target that moved: %+v", p)
	}
	parents := strings.Fields(gitRun(t, g.dir, "rev-list", "--parents", "-n1", "main"))
	if len(parents) != 3 || parents[2] != p.Head || !strings.Contains(gitRun(t, g.dir, "log", "-1", "--format=%an", "main"), "autonomy runner") {
		t.Fatalf("main is not the runner's merge of the head: %v", parents)
	}
	at := g.main()
	p = g.propose("develop", "src/b.txt", "from the agent", "conflict")
	if p.State != store.ProposalRefused || !strings.Contains(p.Reason, "conflicts") || !strings.Contains(p.Reason, "src/b.txt") {
		t.Fatalf("a conflicting target: %+v", p)
	}
	if g.main() == p.Head || gitRun(t, g.dir, "rev-parse", "main~1") != at {
		t.Fatal("a conflicting proposal moved main beyond the person's commit")
	}
}

// A proposal recorded by a tool call with a branch that is no branch name is refused, and
// nothing is launched or merged.
func TestCodeFlowRefusesARecordWithBadNames(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	at := g.main()
	ctx := context.Background()
	p, _, err := g.r.Store.AddProposal(ctx, store.Proposal{Session: "9-zzzz", Actor: "develop", Branch: "--upload-pack=x", Target: "main", Head: at})
	if err != nil {
		t.Fatal(err)
	}
	g.r.advanceProposals(ctx)
	p, _, _ = g.r.Store.ProposalOf(ctx, p.Session)
	if p.State != store.ProposalRefused || !strings.Contains(p.Reason, "invalid branch name") || p.Reviewer != "" || g.main() != at {
		t.Fatalf("a record with a bad branch: %+v", p)
	}
}

// A person as the reviewer: the runner engages them, the operator takes a token for the ask, and
// resolving it done approves the head it named, which then merges.
func TestCodeFlowHumanReviewer(t *testing.T) {
	t.Parallel()
	f := flowFleet
	f.yml = strings.Replace(f.yml, "    review: reviewer\n    execution: { workspace: isolated }\n    triggers: [{ dispatch: true, params: { ITEM: subject.ref } }]",
		"    review: maintainer\n    execution: { workspace: isolated }\n    triggers: [{ dispatch: true, params: { ITEM: subject.ref } }]", 1)
	dir := installFleet(t, f, true)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-qm", "install")
	g := &flowRig{t: t, dir: dir, r: newRunner(t, dir, Options{})}
	g.set("change", "src/h.txt\nby hand\n")
	s := launch(t, g.r, LaunchRequest{Actor: "develop"})
	waitEnded(t, g.r, s.ID)
	ctx := context.Background()
	var p store.Proposal
	for i := 0; i < 300 && (p.State != store.ProposalInReview || !strings.Contains(sessionLogOf(g.r, s.ID), "--new-token")); i++ {
		p, _, _ = g.r.Store.ProposalOf(ctx, s.ID)
		time.Sleep(20 * time.Millisecond)
	}
	if p.State != store.ProposalInReview || p.Reviewer == "" {
		t.Fatalf("a proposal for a person to review: %+v", p)
	}
	if logged := sessionLogOf(g.r, s.ID); strings.Contains(logged, "atk_") {
		t.Fatalf("the proposer's log holds the token:\n%s", logged)
	}
	// runner list says whom the ask waits for and what: review proposal N.
	ask, _, _ := g.r.Store.Get(ctx, p.Reviewer)
	if w, want := g.r.WaitingFor(ctx, ask), fmt.Sprintf("maintainer (a person): review proposal %d of develop (head %s)", p.Seq, short(p.Head)); !strings.HasPrefix(w, want) {
		t.Errorf("WAITING FOR %q, want it to start %q", w, want)
	}
	token, err := g.r.NewAskToken(ctx, p.Reviewer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.r.Update(ctx, p.Reviewer, ir.Patch{Status: ir.Done, Token: token, Evidence: "read it"}); err != nil {
		t.Fatal(err)
	}
	p, _, _ = g.r.Store.ProposalOf(ctx, s.ID)
	if p.State != store.ProposalMerged || g.main() != p.Head {
		t.Fatalf("after the person's approval: %+v", p)
	}
}

// A governing document (documents.roles constitution), a list of its own beside
// human_required_paths, holds the merge for a maintainer as on gh-actions.
func TestCodeFlowGoverningDocumentWaitsForTheMaintainer(t *testing.T) {
	t.Parallel()
	f := flowFleet
	f.yml += "documents:\n  roles:\n    vision: docs/NORTH.md\n    constitution: docs/CONSTITUTION.md\n"
	g := newFlowRigOf(t, f)
	at := g.main()
	p := g.propose("develop", "docs/CONSTITUTION.md", "no rules", "approve")
	if p.State != store.ProposalApproved || p.Ask == "" || g.main() != at || !strings.Contains(p.Reason, "docs/CONSTITUTION.md") {
		t.Fatalf("a change to the constitution did not wait for the maintainer: %+v", p)
	}
}

// The code flow fires the code events: a proposal in review fires the actors declaring
// pull_request (opened), its reviewer's verdict those declaring pull_request_review, with the
// proposal's branch as subject.ref.
func TestCodeFlowFiresCodeEvents(t *testing.T) {
	t.Parallel()
	f := flowFleet
	f.yml = strings.Replace(f.yml, "policy:\n", `  watcher:
    behavior: scripts/quick.sh
    triggers: [{ event: pull_request, params: { PR: subject.ref, WHY: trigger.kind, WHO: subject.actor } }]
  judge:
    behavior: scripts/quick.sh
    triggers: [{ event: pull_request_review, params: { PR: subject.ref, VERDICT: subject.text, WHO: subject.actor } }]
policy:
`, 1)
	f.files = maps.Clone(f.files)
	f.files["scripts/quick.sh"] = "#!/bin/sh\n" + scriptDone
	g := newFlowRigOf(t, f)
	p := g.propose("develop", "src/a.txt", "a", "approve")
	if p.State != store.ProposalMerged {
		t.Fatalf("the proposal: %+v", p)
	}
	ctx := context.Background()
	all, err := g.r.Store.List(ctx, store.ListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ir.LaunchParams{}
	for _, s := range all {
		if s.Origin == "event" {
			got[s.Actor+" "+s.Trigger] = s.Params
		}
	}
	want := map[string]ir.LaunchParams{
		"watcher pull_request":      {"PR": p.Branch, "WHY": "opened", "WHO": "develop"},
		"judge pull_request_review": {"PR": p.Branch, "VERDICT": "approve", "WHO": "reviewer"},
	}
	if len(got) != len(want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	for k, ps := range want {
		for n, v := range ps {
			if got[k][n] != v {
				t.Errorf("%s: %s = %q, want %q (all %v)", k, n, got[k][n], v, got[k])
			}
		}
	}
	settle(t, g.r)
}

// A proposal the propose tool recorded waits for its session's end: tick does not advance it
// meanwhile, and an end that is not done refuses it, saying why.
func TestCodeFlowWaitsForTheToolsProposer(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	ctx := context.Background()
	p, _, err := g.r.Store.AddProposal(ctx, store.Proposal{Session: "9-zzzz", Actor: "develop", Title: "Fix it"})
	if err != nil {
		t.Fatal(err)
	}
	g.r.advanceProposals(ctx)
	if p, _, _ = g.r.Store.ProposalOf(ctx, p.Session); p.State != store.ProposalProposed || p.Reason != "" {
		t.Fatalf("tick advanced a proposal whose session has not ended: %+v", p)
	}
	g.r.proposeOnEnd(ctx, store.Session{ID: "9-zzzz", Actor: "develop", Kind: "agent", Status: ir.Failed})
	if p, _, _ = g.r.Store.ProposalOf(ctx, p.Session); p.State != store.ProposalRefused || !strings.Contains(p.Reason, "ended failed") {
		t.Fatalf("a failed session's proposal: %+v", p)
	}
}

// An approved proposal that several processes take to its merge at once (the maintainer's
// update, the reviewer's and the proposer's supervisors, tick) merges once and ends merged:
// before, one found main moved by another's merge and refused what had merged.
func TestCodeFlowMergesOnceWhoeverMergesAtOnce(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	p := g.awaitingMaintainer()
	ctx := context.Background()
	// The merges queue behind a merge under way (this test's hold of the lock), then go at once.
	gitDir := filepath.Join(g.dir, ".git")
	release, held, err := tryLock(gitDir, true)
	if err != nil || !held {
		t.Fatalf("locking %s: %v %v", gitDir, held, err)
	}
	token, err := g.r.NewAskToken(ctx, p.Ask)
	if err != nil {
		t.Fatal(err)
	}
	other := newRunner(t, g.dir, Options{}) // as another process would
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := g.r.Update(ctx, p.Ask, ir.Patch{Status: ir.Done, Token: token, Evidence: "read the diff"}); err != nil {
			t.Error(err)
		}
	}()
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				other.advanceProposals(ctx)
			} else {
				g.r.advanceProposals(ctx)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	release()
	wg.Wait()
	// What the update left waiting (the ask read done after the others looked) goes now.
	g.r.advanceProposals(ctx)
	p, _, _ = g.r.Store.ProposalOf(ctx, p.Session)
	if p.State != store.ProposalMerged || g.main() != p.Head {
		t.Fatalf("after merges at once: %+v (main %s)", p, g.main())
	}
}

// A reviewer whose result is not a review (it declares none: autonomy.result.v1) ends done with
// no verdict: the proposal is refused saying so and how to give it one, not as a stale verdict
// naming head "" (validate warns of it too: ir's TestBadProfiles).
func TestAReviewerWithoutAReviewContractSaysSo(t *testing.T) {
	t.Parallel()
	f := flowFleet
	f.yml = strings.Replace(f.yml, "    result: { schema: autonomy.review.v1 }\n", "", 1)
	files := map[string]string{}
	for k, v := range flowFleet.files {
		files[k] = v
	}
	files["scripts/review.sh"] = strings.Replace(files["scripts/review.sh"], "case $(cat \"$AUTONOMY_DIR/verdict\") in\n",
		"case $(cat \"$AUTONOMY_DIR/verdict\") in\n  plain) printf '{\"status\":\"done\",\"summary\":\"looked\"}\\n' > \"$AUTONOMY_RESULT\"; exit 0 ;;\n", 1)
	f.files = files
	g := newFlowRigOf(t, f)
	p := g.propose("develop", "src/a.go", "package a", "plain")
	want := `left no verdict: its result names no verdict and no headSha: reviewer's result is not a review (give it result: { schema: autonomy.review.v1 })`
	if p.State != store.ProposalRefused || !strings.Contains(p.Reason, want) {
		t.Fatalf("proposal %s: %s\nwant it refused saying %s", p.State, p.Reason, want)
	}
}

// What an isolated session proposes is the branch its commits were saved as, never another named
// alike: a branch autonomy/develop/<id>-zz made while it ran (by it here; by any session of the
// shared workspace, which may run git) sorted after its own, and was proposed as its work.
func TestCodeFlowProposesTheBranchItSaved(t *testing.T) {
	t.Parallel()
	f := flowFleet
	f.files = maps.Clone(flowFleet.files)
	f.files["scripts/develop.sh"] = strings.Replace(f.files["scripts/develop.sh"], "set -e\n",
		"set -e\ngit branch \"autonomy/develop/$AUTONOMY_SESSION-zz\" HEAD\n", 1)
	g := newFlowRigOf(t, f)
	p := g.propose("develop", "src/greet.txt", "hello", "approve")
	if want := "autonomy/develop/" + p.Session; p.Branch != want {
		t.Fatalf("proposed %s, want %s", p.Branch, want)
	}
	if p.State != store.ProposalMerged || readFile(t, filepath.Join(g.dir, "src/greet.txt")) != "hello\n" {
		t.Fatalf("the session's own work did not merge: %+v", p)
	}
	if s, _, _ := g.r.Store.Get(context.Background(), p.Session); s.Branch != p.Branch {
		t.Errorf("the session's branch on record: %q", s.Branch)
	}
}

// An isolated session's commits are saved as a branch when it ends, and what it proposes is the
// commit they were saved at: another session's git moving that branch in between (its name is
// known in advance) gets nothing of its own proposed as this session's work.
func TestCodeFlowProposesNothingMovedAfterItsSave(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	planted := gitRun(t, g.dir, "commit-tree", "-m", "not the session's", "-p", g.main(), g.main()+"^{tree}")
	g.r.supervisor.phaseHook = func(phase, id string) {
		if phase == "saved" {
			gitRun(t, g.dir, "update-ref", "refs/heads/autonomy/develop/"+id, planted)
		}
	}
	g.set("change", "src/greet.txt\nhello\n")
	g.set("verdict", "approve\n")
	s := launch(t, g.r, LaunchRequest{Actor: "develop", Ref: "42"})
	if got := waitEnded(t, g.r, s.ID); got.Status != ir.Done {
		t.Fatalf("develop ended %s: %s", got.Status, got.Reason)
	}
	ctx := context.Background()
	got, _, _ := g.r.Store.Get(ctx, s.ID)
	if got.Branch != "autonomy/develop/"+s.ID || len(got.SavedHead) != 40 || got.SavedHead == planted {
		t.Fatalf("the session's branch on record: %q at %q", got.Branch, got.SavedHead)
	}
	var said string
	for deadline := time.Now().Add(30 * time.Second); said == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		evs, err := g.r.Store.Events(ctx, s.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Kind == "proposal" {
				said = e.Message
			}
		}
	}
	if !strings.Contains(said, "was moved after its commits were saved") || !strings.Contains(said, got.SavedHead) {
		t.Errorf("the session's end said %q", said)
	}
	if p, ok, _ := g.r.Store.ProposalOf(ctx, s.ID); ok {
		t.Errorf("proposed %+v", p)
	}
	if b, _ := os.ReadFile(filepath.Join(g.dir, "src/greet.txt")); g.main() == planted || string(b) == "hello\n" {
		t.Error("something merged")
	}
}
