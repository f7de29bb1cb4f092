package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/mergecheck"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local/gitws"
)

// merge moves an approved proposal into its target branch: after a maintainer's verified act
// when it touches human-required paths, by a fast-forward when the target has not moved, else
// by a merge commit the runner makes; refused when the branch moved since the review or the
// target moved in a way that conflicts.
func (f *flow) merge(ctx context.Context) {
	r := f.r
	proposer, _, _ := r.Store.Get(ctx, f.p.Session)
	var why string
	_ = r.Store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		why, err = held(tx, proposer.Ref)
		return err
	})
	if why != "" {
		f.wait(ctx, "approved; not merged while "+why)
		return
	}
	// One process at a time merges: a reviewer's supervisor, the proposer's and tick may each
	// take an approved proposal this far at once, and the one that found the target moved by
	// the other's merge refused what had merged.
	wait := mergeWait
	if f.once {
		wait = 0
	}
	unlock, err := lockMerges(ctx, f.repo, wait)
	if err != nil {
		f.wait(ctx, "approved; not merged yet: "+err.Error())
		return
	}
	defer unlock()
	// The proposal as it is now: another process took it further meanwhile, or engaged the
	// maintainer's ask it waits for (a merge from what was read before would engage another).
	cur, ok, err := r.Store.Proposal(ctx, f.p.Seq)
	if err != nil || !ok {
		return
	}
	if f.p = cur; cur.State != store.ProposalApproved {
		return
	}
	if !r.onGitHub() && f.landedBefore(ctx) {
		return
	}
	cfg, err := r.In.Actor(f.p.Actor)
	if err != nil {
		f.refuse(ctx, err.Error(), nil)
		return
	}
	tip, _ := gitws.Git(ctx, f.repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+f.p.Branch+"^{commit}")
	if tip != f.p.Head {
		f.refuse(ctx, fmt.Sprintf("the branch %s moved to %s after its approval of %s; it merges nothing", f.p.Branch, short(tip), short(f.p.Head)), nil)
		return
	}
	if r.onGitHub() && !f.readFromGitHub(ctx) {
		return // the gate reads what GitHub has, in the runner's store (codeflow_ghstore.go)
	}
	old, ok := f.targetBase(ctx) // on codeHost github, GitHub's (codeflow_ghbase.go)
	if !ok {
		return
	}
	files := f.check(ctx, cfg, old)
	if files == nil {
		return
	}
	merged, landed, ok := f.lands(ctx, cfg, files, old)
	if f.old, f.merged, f.landed = old, merged, landed; !ok {
		return
	}
	if r.onGitHub() {
		// GitHub merges it, never the runner (codeflow_github.go), once one ask covers what
		// lands and what GitHub's compare lists (landsOnGitHub).
		f.mergeOnGitHub(ctx)
		return
	}
	if !f.humanApproved(ctx, landed) {
		return
	}
	f.land(ctx, old, merged)
}

// land records the commit the proposal's merge moves the target to, moves it there from old
// (moveTarget) and records the proposal merged. A target that moved meanwhile (another merge
// between the runner's reading it and moving it) leaves the proposal approved, waiting: the next
// step merges it into the current target, its approvals kept where what lands is the same.
func (f *flow) land(ctx context.Context, old, merged string) {
	// What it lands is recorded first: a runner stopped between the land and the record below
	// finds it landed at its next step (landedBefore).
	if err := f.r.Store.Tx(ctx, func(tx *store.Tx) error { return tx.SetMeta(landingKey(f.p.Seq), merged) }); err != nil {
		f.wait(ctx, "approved; not merged yet: "+err.Error())
		return
	}
	if err := f.moveTarget(ctx, old, merged); errors.Is(err, errTargetMoved) {
		f.wait(ctx, "approved; not merged yet: "+err.Error())
		return
	} else if err != nil {
		f.refuse(ctx, err.Error(), nil)
		return
	}
	f.move(ctx, func(m *store.Proposal) {
		m.State, m.Merged = store.ProposalMerged, merged
		m.Reason = fmt.Sprintf("into %s at %s (%s)", f.p.Target, short(merged), f.approval())
	})
}

// lands is what merging the proposal into old lands: the commit it makes (mergeCommit) and the
// files that change, vetted (mergecheck.Landed: a merge that follows a rename on the target
// writes the proposal's edit under the new name, which its own commits never touch). On
// codeHost github it is what GitHub's merge of a head behind its target lands (a 3-way merge,
// when the protection does not require it up to date). False when it refused the proposal or
// left it waiting, saying why.
func (f *flow) lands(ctx context.Context, cfg *ActorConfig, files []string, old string) (string, []string, bool) {
	merged, conflicts, err := f.mergeCommit(ctx, old)
	if err != nil {
		f.wait(ctx, "approved; the merge failed: "+err.Error())
		return "", nil, false
	}
	if len(conflicts) > 0 {
		f.refuse(ctx, fmt.Sprintf("%s moved since and conflicts with it; propose again from the current %s", f.p.Target, f.p.Target), conflicts)
		return "", nil, false
	}
	if f.gdir != "" && merged != f.p.Head {
		// The maintainer's ask names it: kept in the runner's store while the proposal is open.
		if _, err := gitws.Git(ctx, f.gdir, "update-ref", mergedRef(f.p.Seq), merged); err != nil {
			f.wait(ctx, "approved; the merge cannot be kept in the runner's store (tick retries): "+err.Error())
			return "", nil, false
		}
	}
	landed, reason, bad, err := mergecheck.Landed(f.git(ctx), files, old, merged, f.p.Actor, capScope(cfg, "code:propose"))
	if err != nil || reason != "" {
		if err != nil {
			reason = err.Error()
		}
		f.refuse(ctx, reason, bad)
		return "", nil, false
	}
	return merged, landed, true
}

// approval is what the proposal merges with, for its merged reason: the reviewer's approval,
// or the maintainer's ask it waited for, done (its reason said it waited for that ask).
func (f *flow) approval() string {
	why := strings.TrimPrefix(f.p.Reason, "approved; ")
	if f.p.Ask != "" && strings.HasPrefix(why, "waiting for a maintainer's verified act") {
		return fmt.Sprintf("approved, and the maintainer's ask %s resolved done", f.p.Ask)
	}
	return why
}

// landingKey is the store's meta key holding the commit a merge of proposal seq moves its target
// to, written before it moves.
func landingKey(seq int64) string { return "proposal-landing:" + strconv.FormatInt(seq, 10) }

// landedBefore settles an approved proposal whose head is already in its target: merged when
// the commit an earlier merge of it recorded before landing is there (the runner stopped, or
// the store's write failed, between landing it and recording it merged), else refused, as
// merged outside the code flow. False when its head is not in the target.
func (f *flow) landedBefore(ctx context.Context) bool {
	target := "refs/heads/" + f.p.Target
	in := func(commit string) bool {
		if commit == "" {
			return false
		}
		_, err := gitws.Git(ctx, f.repo, "merge-base", "--is-ancestor", commit, target)
		return err == nil
	}
	var landing string
	_ = f.r.Store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		landing, _, err = tx.Meta(landingKey(f.p.Seq))
		return err
	})
	switch {
	case in(landing):
		f.move(ctx, func(m *store.Proposal) {
			m.State, m.Merged = store.ProposalMerged, landing
			m.Reason = fmt.Sprintf("into %s at %s (%s; recorded after its merge was interrupted)", f.p.Target, short(landing), f.approval())
		})
	case in(f.p.Head):
		f.refuse(ctx, fmt.Sprintf("its head %s is already in %s, merged there outside the code flow: nothing to merge", short(f.p.Head), f.p.Target), nil)
	default:
		return false
	}
	return true
}

// mergeWait bounds how long a merge waits for another process's merge of the same repository.
const mergeWait = 2 * time.Minute

// lockMerges takes the exclusive flock of the repository's git directory (the directory itself,
// which a session cannot swap as it could a lock file) for a merge, waiting for another
// process's merge to finish, within wait (0: one try).
func lockMerges(ctx context.Context, repo string, wait time.Duration) (unlock func(), err error) {
	dir, err := gitws.Git(ctx, repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return nil, fmt.Errorf("cannot find the git directory of %s: %v", repo, err)
	}
	free, held, err := flockWithin(ctx, dir, true, wait)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("cannot lock %s: %v", dir, err)
	case !held:
		return nil, fmt.Errorf("another process holds the merge lock of %s (its git directory; waited %s): the next tick retries", repo, wait)
	}
	return free, nil
}

// mergeCommit is the commit the target moves to: the head itself when the target has not
// moved since the branch left it (a fast-forward), else a merge commit of the two made without
// a worktree (git merge-tree), or the paths that conflict.
func (f *flow) mergeCommit(ctx context.Context, old string) (string, []string, error) {
	if _, err := gitws.Git(ctx, f.dir(), "merge-base", "--is-ancestor", old, f.p.Head); err == nil {
		return f.p.Head, nil, nil
	} else if !gitws.Failed(err, 1) {
		return "", nil, err
	}
	out, err := gitws.Output(ctx, f.dir(), "merge-tree", "--write-tree", "-z", "--name-only", "--no-messages", old, f.p.Head)
	if err != nil {
		if gitws.Failed(err, 1) {
			return "", conflicted(out), nil
		}
		return "", nil, fmt.Errorf("git merge-tree (git 2.38 or later is needed): %w", err)
	}
	tree := strings.TrimRight(strings.SplitN(string(out), "\x00", 2)[0], "\n")
	msg := fmt.Sprintf("Merge proposal %d of %s: %s\n\nBranch %s at %s, approved: %s", f.p.Seq, f.p.Actor, oneLine(f.p.Title), f.p.Branch, f.p.Head, f.p.Reason)
	args := append(append([]string{}, mergeIdentity...), "commit-tree", tree, "-p", old, "-p", f.p.Head, "-m", msg)
	commit, err := gitws.Git(ctx, f.dir(), args...)
	return commit, nil, err
}

// oneLine is title on one line: a character that breaks a line (tools.BreaksLine: a line
// break, an escape…) becomes a space, so a title writes no line of the runner's merge message
// of its own.
func oneLine(title string) string {
	return strings.Map(func(r rune) rune {
		if tools.BreaksLine(r) {
			return ' '
		}
		return r
	}, title)
}

// conflicted reads the paths git merge-tree -z --name-only reports after the tree.
func conflicted(out []byte) []string {
	parts := strings.Split(string(out), "\x00")
	var paths []string
	for _, p := range parts[1:] {
		if p == "" {
			break // the informational messages follow an empty record
		}
		paths = append(paths, p)
	}
	if len(paths) == 0 {
		paths = []string{"(git names no path)"}
	}
	return paths
}

// errTargetMoved is moveTarget's error for a target that moved from the commit it merged into.
var errTargetMoved = errors.New("the target moved while it merged")

// moveTarget moves the target from old to merged: in the checkout that has it checked out, by a
// fast-forward that refuses to overwrite local changes there; else by a compare-and-swap of
// the branch, which fails (errTargetMoved) if it moved meanwhile.
func (f *flow) moveTarget(ctx context.Context, old, merged string) error {
	if at, _ := gitws.CheckedOut(ctx, f.repo, f.p.Target); at != "" {
		head, err := gitws.Git(ctx, at, "rev-parse", "HEAD")
		if err != nil {
			return fmt.Errorf("cannot read %s's head in %s: %v", f.p.Target, at, err)
		}
		if head != old {
			return fmt.Errorf("%w: %s moved from %s to %s; the next step merges it into the current %s", errTargetMoved, f.p.Target, short(old), short(head), f.p.Target)
		}
		if _, err := gitws.Git(ctx, at, "merge", "--ff-only", "--quiet", merged); err != nil {
			return fmt.Errorf("%s is checked out in %s and cannot fast-forward to %s there (%v): commit or stash the changes there, or merge it yourself with git -C %s merge --ff-only %s", f.p.Target, at, short(merged), err, at, merged)
		}
		return nil
	}
	if _, err := gitws.Git(ctx, f.repo, "update-ref", "-m", fmt.Sprintf("autonomy: merge proposal %d", f.p.Seq), "refs/heads/"+f.p.Target, merged, old); err != nil {
		return fmt.Errorf("%w: %s is no longer at %s (%v); the next step merges it into the current %s", errTargetMoved, f.p.Target, short(old), err, f.p.Target)
	}
	return nil
}

// humanApproved says whether the proposal may merge as far as people go: it touches no
// human-required path and its reviewer asked for no person (codeflow_person.go), or a
// maintainer resolved the ask engaged for it done. Otherwise it engages that ask (once) and
// waits, or refuses when the ask was declined.
func (f *flow) humanApproved(ctx context.Context, files []string) bool {
	touched, ok := f.humanTouched(ctx, files)
	if !ok {
		return false
	}
	touched, ok = f.forPerson(ctx, files, touched)
	return ok && f.personApproves(ctx, touched)
}

// personApproves is humanApproved of the proposal, touched naming what a person must approve.
func (f *flow) personApproves(ctx context.Context, touched []string) bool {
	r := f.r
	if len(touched) == 0 {
		return true
	}
	if f.p.Ask != "" {
		if approved, settled := f.asked(ctx, touched); settled {
			return approved
		}
	}
	maintainer := r.maintainer()
	if maintainer == "" {
		f.refuse(ctx, "a maintainer must approve it and no human actor holds code:review to approve it (add one to the profile)", touched)
		return false
	}
	proposer, _, _ := r.Store.Get(ctx, f.p.Session)
	text := fmt.Sprintf("Approve merging proposal %d of %s (branch %s at %s into %s)? A maintainer must approve it for: %s. The operator approves it: autonomy runner update ASK --new-token, then autonomy runner update ASK --status done --token TOKEN --evidence WHAT-YOU-CHECKED (failed to decline).",
		f.p.Seq, f.p.Actor, f.p.Branch, f.p.Head, f.p.Target, strings.Join(touched, ", "))
	if f.merged != "" {
		// The approval binds to what lands at those paths: the merge's difference from the target.
		diff, where := "git diff", "a commit in the repository"
		if f.gdir != "" {
			// On codeHost github, read from the runner's store of what GitHub has: the
			// repository's objects are a session's to overwrite.
			diff, where = "git --git-dir "+f.gdir+" diff", "a commit in the runner's store of GitHub's objects, which no session writes"
		}
		text += fmt.Sprintf(" What its merge lands there: %s %s %s (the merge, %s, of the target at %s).", diff, f.old, f.merged, where, f.old)
	}
	cfg, err := r.In.Actor(maintainer)
	if err != nil {
		f.refuse(ctx, err.Error(), nil)
		return false
	}
	res, err := r.asks.engage(ctx, cfg, store.Session{Actor: maintainer, Kind: "human", Ref: proposer.Ref, Params: ir.LaunchParams{}, Trigger: "dispatch", Origin: fmt.Sprintf("proposal:%d", f.p.Seq)})
	if res.Session.ID == "" {
		f.wait(ctx, fmt.Sprintf("approved; engaging the maintainer %s failed: %v", maintainer, err))
		return false
	}
	// What the maintainer is asked to approve: an approval covers these paths, no other, with
	// what lands at each of them now.
	asked, _ := json.Marshal(askedPaths{Ask: res.Session.ID, Paths: touched, Blobs: f.blobs(ctx, touched)})
	_ = r.Store.Tx(ctx, func(tx *store.Tx) error { return tx.SetMeta(askKey(f.p.Seq), string(asked)) })
	_ = r.Store.Log(ctx, store.Event{Session: res.Session.ID, Actor: maintainer, Kind: "proposal", Message: text})
	f.tellOperator(res.Session.ID, "needs a maintainer ("+strings.Join(touched, ", ")+"): a maintainer approves it")
	f.move(ctx, func(m *store.Proposal) {
		m.Ask = res.Session.ID
		m.Reason = askReason(res.Session.ID, maintainer, touched)
	})
	return false
}

// askedPaths are the human-required paths the maintainer's ask Ask was engaged for, and what
// the merge landed at each when it was (Blobs: a path's blob in the merged commit, absent when
// none is there).
type askedPaths struct {
	Ask   string            `json:"ask"`
	Paths []string          `json:"paths"`
	Blobs map[string]string `json:"blobs,omitempty"`
}

// blobs is the blob the proposal's merge (f.merged) lands at each of paths; a path it lands
// nothing at is left out.
func (f *flow) blobs(ctx context.Context, paths []string) map[string]string {
	if f.merged == "" {
		return nil
	}
	out := map[string]string{}
	for _, p := range paths {
		if id, err := gitws.Git(ctx, f.dir(), "rev-parse", "--verify", "--quiet", f.merged+":"+p); err == nil {
			out[p] = id
		}
	}
	return out
}

func askKey(seq int64) string { return "proposal-ask:" + strconv.FormatInt(seq, 10) }

// asked reads the maintainer's ask the proposal names: approved when it was resolved done for
// every path of touched, with what lands at each unchanged since it was engaged; settled (no ask to engage) when it is still open, was declined (the
// proposal refused) or cannot be read. An ask resolved done for fewer paths than what lands
// now touches, or for what lands at them otherwise than now (the target moved since: a rename
// it made carries the proposal's edit under a human-required path the ask named), is no
// approval of them, and a new ask is engaged.
func (f *flow) asked(ctx context.Context, touched []string) (approved, settled bool) {
	a, ok, err := f.r.Store.Get(ctx, f.p.Ask)
	switch {
	case err != nil:
		return false, true
	case !ok:
		return false, false
	case !a.Status.Ended():
		f.wait(ctx, askReason(a.ID, a.Actor, touched))
		return false, true
	case a.Status != ir.Done:
		f.refuse(ctx, fmt.Sprintf("a maintainer must approve it and the maintainer's ask %s ended %s (%s)", a.ID, a.Status, a.Evidence), touched)
		return false, true
	}
	var was askedPaths
	_ = f.r.Store.Tx(ctx, func(tx *store.Tx) error {
		v, _, err := tx.Meta(askKey(f.p.Seq))
		if err == nil && v != "" {
			err = json.Unmarshal([]byte(v), &was)
		}
		return err
	})
	if was.Ask == a.ID && subset(touched, was.Paths) && maps.Equal(f.blobs(ctx, touched), subMap(was.Blobs, touched)) {
		return true, true
	}
	return false, false
}

// subMap is m restricted to keys.
func subMap(m map[string]string, keys []string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// subset says whether every path of a is in b.
func subset(a, b []string) bool {
	for _, p := range a {
		if !slices.Contains(b, p) {
			return false
		}
	}
	return true
}

// askReason is what an approved proposal waits for while the maintainer's ask id is open.
func askReason(id, maintainer string, touched []string) string {
	return fmt.Sprintf("approved; waiting for a maintainer's verified act: ask %s to %s (for: %s)", id, maintainer, strings.Join(touched, ", "))
}

// maintainer is the human actor that approves human-required paths: the first holding
// code:review, as on gh-actions.
func (r *Runner) maintainer() string {
	for _, name := range r.In.Runner.Actors {
		if cfg, err := r.In.Actor(name); err == nil && cfg.Kind == "human" && holds(cfg, "code:review") {
			return name
		}
	}
	return ""
}

// advanceProposals takes every open proposal as far as it can go: what tick does, so that a
// step a pause, the capacity or a crash held back is taken later. It waits for no merge under
// way (flow.once): a proposal another process is merging is left for the next tick.
func (r *Runner) advanceProposals(ctx context.Context) {
	defer r.collectPending(ctx) // a collection of the runner's store left pending (codeflow_ghgc.go)
	open, err := r.Store.Proposals(ctx, false, 0)
	if err != nil || len(open) == 0 {
		return
	}
	repo, err := gitws.Repo(r.In.Dir)
	if err != nil {
		return
	}
	for i := len(open) - 1; i >= 0; i-- { // oldest first
		(&flow{r: r, repo: repo, p: open[i], once: true}).advance(ctx)
	}
}

// settleProposalOf advances the proposal that session s (ended) reviews or approves, if any.
func (r *Runner) settleProposalOf(ctx context.Context, s store.Session) {
	p, ok, err := r.Store.ProposalReviewedBy(ctx, s.ID)
	if err == nil && !ok {
		p, ok, err = r.Store.ProposalAwaiting(ctx, s.ID)
	}
	if err != nil || !ok {
		return
	}
	repo, err := gitws.Repo(r.In.Dir)
	if err != nil {
		return
	}
	(&flow{r: r, repo: repo, p: p}).advance(ctx)
}

// afterEnd is the code flow's part of a session's end: a proposer's end proposes, a reviewer's
// or a maintainer's end advances the proposal it settles.
func (r *Runner) afterEnd(ctx context.Context, id string) {
	s, ok, err := r.Store.Get(ctx, id)
	if err != nil || !ok || !s.Status.Ended() {
		return
	}
	r.proposeOnEnd(ctx, s)
	r.settleProposalOf(ctx, s)
}
