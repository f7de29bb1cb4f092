package local

import (
	"context"
	"fmt"
	"strings"

	"github.com/autonomyhq/autonomy/internal/mergecheck"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/local/gitws"
)

// The local code flow is the runner's counterpart of the gh-actions trusted propose and review
// jobs: the agent never merges. When a session of an actor holding code:propose ends done with
// commits on its branch (the --branch it ran on, or the autonomy/<actor>/<id> branch its
// isolated worktree's commits were saved on), the runner records a proposal (store.Proposal),
// applies the checks of autonomy gh propose (internal/mergecheck: no merge commits, no
// workflow, action or installation file, within the @scope), and launches the actor's reviewer
// on the branch, with the head in its subject.text. When the reviewer ends, its verdict (its
// result: verdict, headSha) is bound to that head: a verdict naming another head, or a branch
// that moved since, is stale and merges nothing. An approval merges the branch into the target
// branch (policy.box.local.targetBranch, else the branch the installation root has checked out)
// by a fast-forward, or by a merge commit the runner makes, refusing when the target moved in a
// way that conflicts; a change to policy.box.risk.human_required_paths or to a governing
// document (the vision and constitution of documents.roles) first waits for a maintainer's
// verified act (an ask to the human actor holding code:review, resolved by the operator only,
// with a token only the operator is given: codeflow_ask.go). Every step is also retried by tick,
// so a pause, a full capacity or a crash between
// steps delays the flow, never loses it.

// mergeIdentity is who the runner's merge commits are by.
var mergeIdentity = []string{"-c", "user.name=autonomy runner", "-c", "user.email=runner@autonomy.invalid"}

// flow is one step of the code flow on one proposal, with what it needs at hand.
type flow struct {
	r    *Runner
	repo string
	p    store.Proposal
	// once: its merge tries the merge lock once and, finding another process's merge under
	// way, leaves the proposal for later, saying so (tick's, which takes every open proposal in
	// turn and must not wait for each).
	once bool
	// old and merged are the target and the commit its merge into it makes (mergeCommit), once
	// computed: what the maintainer's approval binds to.
	old, merged string
	// landed are the files that merge changes, vetted (on codeHost github, gated with GitHub's
	// compare in one ask: landsOnGitHub).
	landed []string
	// gdir is where the gate's git reads run on codeHost github: the runner's store of GitHub's
	// objects (readFromGitHub), never the repository's, which a session writes ("" until then).
	// alt is the repository's object directory while the checks before the push read the head
	// from there (targetBase): read as an alternate of the store's, never written.
	gdir, alt string
	// unstore releases this step's hold on the store (openStore); ended: the proposal ended in
	// this step, so the store's refs of it go (collectStore).
	unstore func()
	ended   bool
}

// proposeOnEnd records the proposal of session s, which ended done, if its actor proposes code
// and it left commits on a branch; and takes it as far as it can go now.
func (r *Runner) proposeOnEnd(ctx context.Context, s store.Session) {
	if s.Kind != "agent" {
		return
	}
	if s.Status != ir.Done {
		r.dropUnfinished(ctx, s, fmt.Sprintf("its session ended %s: only a session that ends done proposes", s.Status))
		return
	}
	cfg, err := r.In.Actor(s.Actor)
	if err != nil || !holds(cfg, "code:propose") {
		return
	}
	repo, err := gitws.Repo(r.In.Dir)
	if err != nil {
		return
	}
	branch := proposalBranch(s)
	if branch == "" {
		existing, ok, _ := r.Store.ProposalOf(ctx, s.ID)
		if !ok || existing.Branch == "" {
			// it worked in the installation root, or made no commits: nothing to propose
			r.dropUnfinished(ctx, s, "its session left no commits on a branch of its own (run it with --branch or an isolated workspace)")
			return
		}
		branch = existing.Branch
	}
	head, err := gitws.Git(ctx, repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		r.dropUnfinished(ctx, s, fmt.Sprintf("its branch %s does not exist", branch))
		return
	}
	if s.SavedHead != "" && branch == s.Branch && head != s.SavedHead {
		// Another session's git moved the branch the runner saved its commits as.
		why := fmt.Sprintf("its branch %s was moved after its commits were saved there (from %s to %s): what it points to now is not this session's work", branch, short(s.SavedHead), short(head))
		_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "proposal", Message: "nothing proposed: " + why + "; its own commits are " + s.SavedHead})
		r.dropUnfinished(ctx, s, why)
		return
	}
	rec := store.Proposal{Session: s.ID, Actor: s.Actor, Branch: branch, Head: head}
	rec.Title, _ = gitws.Git(ctx, repo, "log", "-1", "--format=%s", head)
	if rec.Target, err = r.targetBranch(ctx, repo); err != nil {
		rec.State, rec.Reason = store.ProposalRefused, err.Error()
	} else if _, aerr := gitws.Git(ctx, repo, "merge-base", "--is-ancestor", head, "refs/heads/"+rec.Target); aerr == nil {
		r.dropUnfinished(ctx, s, fmt.Sprintf("its branch %s has no commit that %s lacks", branch, rec.Target))
		return
	}
	p, _, err := r.Store.AddProposal(ctx, rec)
	if err != nil {
		_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "proposal", Message: "the proposal was not recorded: " + err.Error()})
		return
	}
	if p.Head == "" || p.Branch == "" || p.Target == "" {
		// A tool call recorded it before the commits were known: the session's end completes it.
		p, _, _ = r.Store.MoveProposal(ctx, p.Seq, []store.ProposalState{store.ProposalProposed}, func(m *store.Proposal) {
			m.Branch, m.Head, m.Target = branch, head, or(m.Target, rec.Target)
		})
		if unfinished(p) { // no target: why is in rec
			r.dropUnfinished(ctx, s, rec.Reason)
			return
		}
	}
	_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "proposal", Message: fmt.Sprintf("proposal %d: branch %s at %s, into %s", p.Seq, p.Branch, short(p.Head), p.Target)})
	(&flow{r: r, repo: repo, p: p}).advance(ctx)
}

// dropUnfinished refuses, saying why, the proposal the propose tool recorded for session s
// (ended) that its end cannot complete.
func (r *Runner) dropUnfinished(ctx context.Context, s store.Session, why string) {
	p, ok, err := r.Store.ProposalOf(ctx, s.ID)
	if err != nil || !ok || !unfinished(p) {
		return
	}
	f := &flow{r: r, p: p}
	f.refuse(ctx, "nothing to propose: "+why, nil)
}

// unfinished says whether p was recorded by the propose tool and waits for its session's end
// to complete it (its branch, head and target).
func unfinished(p store.Proposal) bool {
	return p.State == store.ProposalProposed && p.Target == ""
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func short(sha string) string { return sha[:min(len(sha), 12)] }

// holds says whether cfg holds capability name (scoped or not).
func holds(cfg *ActorConfig, name string) bool {
	return capScope(cfg, name) != "-"
}

// capScope is the scope of cfg's capability name ("" unscoped, "-" when it does not hold it).
func capScope(cfg *ActorConfig, name string) string {
	for _, c := range substrates.ParseCapabilities(cfg.Capabilities) {
		if c.Name == name {
			return c.Scope
		}
	}
	return "-"
}

// proposalBranch is the branch session s left its commits on: the branch it ran on, or the one
// its isolated worktree's commits were saved as (autonomy/<actor>/<id>, or -2, -3 … when taken),
// which its supervisor recorded as its branch (recordSaved); "" when there is none. A branch is
// never guessed by its name: a session could create one named as another's saved commits.
func proposalBranch(s store.Session) string {
	return s.Branch
}

// targetBranch is where approved proposals merge: policy.box.local.targetBranch, else the
// branch the installation root has checked out.
func (r *Runner) targetBranch(ctx context.Context, repo string) (string, error) {
	if t := r.In.Runner.TargetBranch; t != "" {
		return t, nil
	}
	b, err := gitws.Git(ctx, repo, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil || b == "" {
		return "", fmt.Errorf("the installation root is on no branch (detached HEAD): set policy.box.local.targetBranch")
	}
	// The root's HEAD is a file a session can write while it runs: the branch it named first is
	// the target, and another later is refused.
	return r.pin("target-branch-from-head", b, "the installation root's checked-out branch", "policy.box.local.targetBranch")
}

// advance takes the proposal as far as it can go now: checked and in review, settled by its
// verdict, approved by the maintainer, merged, or refused.
func (f *flow) advance(ctx context.Context) {
	if unfinished(f.p) {
		return // the propose tool recorded it; the session's end completes it (proposeOnEnd)
	}
	defer f.finish(ctx)
	for i := 0; i < 4; i++ {
		before := f.p.State
		switch f.p.State {
		case store.ProposalProposed:
			f.review(ctx)
		case store.ProposalInReview:
			f.settle(ctx)
		case store.ProposalApproved:
			f.merge(ctx)
		default:
			return
		}
		if f.p.State == before {
			return // waiting: for the reviewer, the maintainer, the resume, the capacity
		}
	}
}

// move applies fn to the proposal while it is still in the state it was read in, and records
// what changed as an event of the proposer's session.
func (f *flow) move(ctx context.Context, fn func(*store.Proposal)) bool {
	from := f.p.State
	p, changed, err := f.r.Store.MoveProposal(ctx, f.p.Seq, []store.ProposalState{from}, fn)
	if err != nil || !changed {
		if err == nil {
			f.p = p // another process moved it first
		}
		return false
	}
	f.p = p
	f.ended = f.ended || p.State == store.ProposalMerged || p.State == store.ProposalRefused
	msg := fmt.Sprintf("proposal %d: %s", p.Seq, p.String())
	_ = f.r.Store.Log(ctx, store.Event{Session: p.Session, Actor: p.Actor, Kind: "proposal", Message: msg})
	return true
}

// refuse ends the proposal refused, saying why.
func (f *flow) refuse(ctx context.Context, reason string, bad []string) {
	if len(bad) > 0 {
		reason += ": " + strings.Join(bad, ", ")
	}
	f.move(ctx, func(m *store.Proposal) { m.State, m.Reason = store.ProposalRefused, reason })
}

// wait keeps the proposal where it is, saying what it waits for (the reason changes only).
func (f *flow) wait(ctx context.Context, why string) {
	if f.p.Reason == why {
		return
	}
	f.move(ctx, func(m *store.Proposal) { m.Reason = why })
}

// git runs git in the repository, output as it is.
func (f *flow) git(ctx context.Context) mergecheck.Git {
	return func(args ...string) ([]byte, error) { return gitws.OutputAlt(ctx, f.dir(), f.alt, args...) }
}

// check applies gh propose's checks to the proposal's commits from their merge base with
// base; it returns the paths they change, or refuses the proposal (nil).
func (f *flow) check(ctx context.Context, cfg *ActorConfig, base string) []string {
	mb, err := gitws.GitAlt(ctx, f.dir(), f.alt, "merge-base", base, f.p.Head)
	if err != nil {
		f.refuse(ctx, "its commits share no history with "+f.p.Target, nil)
		return nil
	}
	scope := capScope(cfg, "code:propose")
	if scope == "-" {
		f.refuse(ctx, fmt.Sprintf("actor %q no longer holds code:propose", f.p.Actor), nil)
		return nil
	}
	files, reason, bad, err := mergecheck.Changes(f.git(ctx), mb, f.p.Head, f.p.Actor, scope)
	if err != nil {
		f.wait(ctx, "cannot read its commits: "+err.Error())
		return nil
	}
	if reason != "" {
		f.refuse(ctx, reason, bad)
		return nil
	}
	if len(files) == 0 {
		f.refuse(ctx, "its commits change no file", nil)
		return nil
	}
	return files
}

// review checks the proposal and launches the proposer's reviewer on its head.
func (f *flow) review(ctx context.Context) {
	r := f.r
	cfg, err := r.In.Actor(f.p.Actor)
	if err != nil {
		f.refuse(ctx, err.Error(), nil)
		return
	}
	// A proposal a tool call recorded names its branches itself: they must be branch names.
	for _, b := range []string{f.p.Branch, f.p.Target} {
		if err := gitws.ValidBranch(b); err != nil {
			f.refuse(ctx, err.Error(), nil)
			return
		}
	}
	base, ok := f.targetBase(ctx)
	checked := ok && f.check(ctx, cfg, base) != nil
	f.gdir, f.alt = "", "" // the gate (merge) reads GitHub's objects alone (readFromGitHub)
	if !checked {
		return // on codeHost github, checked against GitHub's target (codeflow_ghbase.go)
	}
	if cfg.Reviewer == "" {
		f.refuse(ctx, fmt.Sprintf("actor %q names no reviewer (review: REVIEWER), so nothing can approve it", f.p.Actor), nil)
		return
	}
	if r.onGitHub() && f.pullOf(ctx) == 0 && !f.openPull(ctx) {
		return // codeflow_github.go: pushed and opened first, reviewed then
	}
	proposer, _, _ := r.Store.Get(ctx, f.p.Session)
	branch := f.p.Branch
	if rc, err := r.In.Actor(cfg.Reviewer); err == nil && rc.Kind == "human" {
		branch = "" // a person reviews from the text; resolving the ask done approves that head
	}
	text := fmt.Sprintf("Review proposal %d of %s (session %s): branch %s at head %s, to merge into %s. Your verdict binds to that head: end with a result whose headSha is %s and whose verdict is approve, request-changes or comment.",
		f.p.Seq, f.p.Actor, f.p.Session, f.p.Branch, f.p.Head, f.p.Target, f.p.Head)
	res, err := r.launchAs(ctx, LaunchRequest{Actor: cfg.Reviewer, Ref: proposer.Ref, From: f.p.Actor, Text: text, Kind: "dispatch", Branch: branch, forAgent: true}, fmt.Sprintf("proposal:%d", f.p.Seq))
	if err != nil {
		if res.Session.ID == "" {
			f.wait(ctx, fmt.Sprintf("the reviewer %s is not launched yet: %v (tick retries)", cfg.Reviewer, err))
			return
		}
	}
	rid := res.Session.ID
	if res.Session.Kind == "human" {
		f.tellOperator(rid, "waits for "+cfg.Reviewer+"'s review: a person approves its head "+short(f.p.Head))
	}
	if !f.move(ctx, func(m *store.Proposal) {
		m.State, m.Reviewer, m.Reason = store.ProposalInReview, rid, fmt.Sprintf("reviewer %s, session %s, on %s", cfg.Reviewer, rid, short(f.p.Head))
	}) {
		_, _ = r.Cancel(ctx, rid) // another process launched one first
		return
	}
	f.fireOpened(ctx) // the counterpart of the pull request opened (code_events.go)
}

// settle reads the reviewer's verdict once its session ended, and binds it to the head.
func (f *flow) settle(ctx context.Context) {
	rs, ok, err := f.r.Store.Get(ctx, f.p.Reviewer)
	if err != nil || (ok && !rs.Status.Ended()) {
		return
	}
	if !ok || rs.Status != ir.Done {
		why := "its reviewer's session is gone"
		if ok {
			why = fmt.Sprintf("its reviewer's session %s ended %s: %s", rs.ID, rs.Status, rs.Reason)
		}
		f.refuse(ctx, why, nil)
		return
	}
	rv, err := readReview(f.r.In.Path(StateDir + "/results/" + rs.ID + ".json"))
	if rs.Kind == "human" {
		// A person's ask resolved done, with its token and evidence, approves the head it named.
		rv, err = reviewResult{Verdict: "approve", HeadSha: f.p.Head}, nil
	}
	verdict, head := rv.Verdict, rv.HeadSha
	if err == nil && verdict == "" && head == "" {
		err = fmt.Errorf("its result names no verdict and no headSha: %s's result is not a review (give it result: { schema: %s })", rs.Actor, ir.ReviewContract)
	}
	if err != nil {
		f.refuse(ctx, fmt.Sprintf("its reviewer's session %s left no verdict: %v", rs.ID, err), nil)
		return
	}
	defer f.fireVerdict(ctx, rs.Actor, verdict, head) // once the proposal moved (code_events.go)
	tip, _ := gitws.Git(ctx, f.repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+f.p.Branch+"^{commit}")
	switch {
	case head == "" || !strings.EqualFold(head, f.p.Head):
		f.refuse(ctx, fmt.Sprintf("stale verdict: it names head %q, but the proposal is %s; a verdict binds to the head it reviewed, so it merges nothing", head, f.p.Head), nil)
	case tip != f.p.Head:
		f.refuse(ctx, fmt.Sprintf("stale verdict: the branch %s moved to %s after the review of %s; it merges nothing", f.p.Branch, short(tip), short(f.p.Head)), nil)
	case f.staleOnGitHub(ctx):
		// refused or left waiting, saying why
	case verdict != "approve" && verdict != "success":
		why := fmt.Sprintf("the reviewer %s did not approve (verdict %q)", rs.Actor, verdict)
		f.refuse(ctx, why+f.postVerdict(ctx, false, why), nil)
	default:
		why := fmt.Sprintf("approved by %s (session %s) on %s", rs.Actor, rs.ID, short(f.p.Head))
		if rv.Person {
			if !f.askedForPerson(ctx, rs.Actor) {
				return // waiting in review, saying why (codeflow_person.go)
			}
			why += "; " + rs.Actor + " asks that a person approve it"
		}
		why += f.postVerdict(ctx, true, why)
		f.move(ctx, func(m *store.Proposal) { m.State, m.Reason = store.ProposalApproved, why })
	}
}

// humanPaths are the paths whose change waits for a maintainer, as installed in
// .autonomy/policy.json: policy.box.risk.human_required_paths, and the governing documents
// (governingDocuments: the vision and constitution of documents.roles), as gh-actions' human
// gate holds both. Read as every installed config is (its DO NOT EDIT header checked): a policy
// edited, damaged or gone is an error, on which the code flow holds the merge (fail closed)
// where it used to read no path at all and merge on the reviewer's approval alone.
func (in *Install) humanPaths() ([]string, error) {
	var doc struct {
		Governing []string `json:"governingDocuments"`
		Box       struct {
			Risk struct {
				Paths []string `json:"human_required_paths"`
			} `json:"risk"`
		} `json:"box"`
	}
	if _, err := readJSONFile(in.Dir, substrates.PolicyPath, &doc); err != nil {
		return nil, fmt.Errorf("the paths a maintainer must approve (%s) cannot be read: %w", substrates.PolicyPath, err)
	}
	return append(doc.Box.Risk.Paths, doc.Governing...), nil
}

// humanTouched is what of files a maintainer must approve (humanPaths), or false, the proposal
// held saying why, when the installed policy cannot be read.
func (f *flow) humanTouched(ctx context.Context, files []string) ([]string, bool) {
	paths, err := f.r.In.humanPaths()
	if err != nil {
		f.wait(ctx, "approved; not merged: "+err.Error())
		return nil, false
	}
	return mergecheck.Matching(files, paths), true
}
