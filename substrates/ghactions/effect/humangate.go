package effect

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghevent"
)

// The human gate. A pull request that touches policy.box.risk.human_required_paths merges only
// once a maintainer's verified act is recorded on its current head: the human-approval status,
// which branch protection requires (autonomy provision) and only trusted jobs post:
//   - autonomy gh propose, which may push code and so posts no status (no job holds both
//     contents: write and statuses: write), dispatches the control workflow's human-gate job
//     for the pull request (GateInput), and binds the ask it posts to the head it pushed (its
//     marker's head=);
//   - the resolution of that ask (a maintainer's /agent approve TOKEN, autonomy gh control)
//     posts success on the head the ask names, only while it is still the pull request's
//     head; /agent reject posts failure;
//   - autonomy gh human-gate, on that dispatch, on a pull request's events
//     (pull_request_target) and on a review submitted or dismissed (pull_request_review), posts success on the head when a maintainer's
//     latest review approves that very commit, pending when the review that approved it is
//     withdrawn; and, on a head that has no human-approval status yet (a push by a person, a
//     pull request opened by hand), success or pending by the paths it changes.
//
// A new push is a new head, which has no status: nothing merges until the gate is posted
// again, and an approval of an older head never carries over.

// HumanApprovalContext is the status of the human gate, required by branch protection when the
// profile has human-required paths.
const HumanApprovalContext = "human-approval"

// ControlWorkflow is the control workflow's file; GateInput its workflow_dispatch input naming
// the pull request whose human gate its human-gate job posts.
const (
	ControlWorkflow = "autonomy-control.yml"
	GateInput       = "autonomy_gate_pr"
)

// postGate posts the human gate's state on sha.
func (e *Env) postGate(ctx context.Context, sha, state, desc string) error {
	if r := []rune(desc); len(r) > 140 {
		desc = string(r[:139]) + "…"
	}
	st := &github.RepoStatus{State: github.String(state), Context: github.String(HumanApprovalContext), Description: github.String(desc)}
	if e.RunURL != "" {
		st.TargetURL = github.String(e.RunURL)
	}
	if _, _, err := e.Client.Repositories.CreateStatus(ctx, e.Owner, e.Repo, sha, st); err != nil {
		return fmt.Errorf("posting %s on %s: %w", HumanApprovalContext, sha, err)
	}
	fmt.Fprintf(e.Out, "%s: %s on %s (%s)\n", HumanApprovalContext, state, sha, desc)
	return nil
}

// resolveGate posts what the resolution of an ask bound to a head says of the human gate,
// after checking that the head is still the pull request's: approve is success, reject
// failure; an answer leaves the gate as it is.
func (e *Env) resolveGate(ctx context.Context, a *Ask, verb, by string) error {
	if a.Head == "" || verb == "answer" {
		return nil
	}
	pull, _, err := e.Client.PullRequests.Get(ctx, e.Owner, e.Repo, a.Item)
	if err != nil {
		return fmt.Errorf("reading #%d: %w", a.Item, err)
	}
	def, err := e.DefaultBranch(ctx)
	if err != nil {
		return err
	}
	if base := pull.GetBase().GetRef(); base != def {
		return &Refused{fmt.Sprintf("#%d goes into %s, not the default branch %s: its head is approved only as a change into the default branch (nothing is approved)", a.Item, base, def)}
	}
	if head := pull.GetHead().GetSHA(); !strings.EqualFold(head, a.Head) {
		return &Refused{fmt.Sprintf("this ask was for the head %s, and the head of #%d is now %s: approve the ask posted for the new head (nothing is approved)", a.Head, a.Item, head)}
	}
	if verb == "reject" {
		return e.postGate(ctx, a.Head, "failure", "rejected by @"+by)
	}
	return e.postGate(ctx, a.Head, "success", "approved by @"+by+commandApproval)
}

// HumanGate is what CheckHumanGate found.
type HumanGate struct {
	// SHA is the pull request's head; State the status posted ("" when none was); By the
	// maintainer whose review approved it.
	SHA, State, By string
	// HumanRequired are the changed paths that need a maintainer (when they were listed).
	HumanRequired []string
}

// maxListedFiles is the most files GitHub's compare lists: at it, the files are not all known,
// and the gate asks for a maintainer.
const maxListedFiles = 300

// The descriptions of the gate's successes: only a maintainer's /agent approve is kept as it
// is; a review's holds while the review does; any other success (the paths') is evaluated again
// each time (the same commit may come back in another pull request).
const (
	reviewApproval  = " (review of this head)"
	commandApproval = " (/agent approve)"
	noHumanPath     = "no human-required path is changed"
)

// CheckHumanGate evaluates the human gate of pull request e.Subject on its current head: success
// when a maintainer's latest review approves that head; pending again when the review that
// approved it is withdrawn; otherwise, unless the head's gate is already a maintainer's approval
// or pending or failed, success if no path the pull request changes is human-required, else
// pending. It never turns a pending or failed gate into success without a maintainer's approval,
// and posts nothing for a pull request into another branch than the default (a status is the
// commit's, whatever pull request it is in).
func CheckHumanGate(ctx context.Context, e *Env) (*HumanGate, error) {
	n, err := ghevent.ItemNumber(e.Subject)
	if err != nil {
		return nil, fmt.Errorf("the subject (the pull request): %w", err)
	}
	pull, resp, err := e.Client.PullRequests.Get(ctx, e.Owner, e.Repo, n)
	if resp != nil && resp.StatusCode == 404 {
		return nil, &Refused{fmt.Sprintf("#%d is not a pull request", n)}
	}
	if err != nil {
		return nil, fmt.Errorf("reading #%d: %w", n, err)
	}
	def, err := e.DefaultBranch(ctx)
	if err != nil {
		return nil, err
	}
	g := &HumanGate{SHA: pull.GetHead().GetSHA()}
	if base := pull.GetBase().GetRef(); base != def {
		fmt.Fprintf(e.Out, "#%d is into %s, not the default branch %s: no gate is posted\n", n, base, def)
		return g, nil
	}
	if g.By, err = e.approvedBy(ctx, n, g.SHA); err != nil {
		return nil, err
	}
	if g.By != "" {
		g.State = "success"
		return g, e.postGate(ctx, g.SHA, g.State, "approved by @"+g.By+reviewApproval)
	}
	last, err := e.latestGate(ctx, g.SHA)
	if err != nil {
		return nil, err
	}
	switch {
	case last != nil && last.GetState() == "success" && strings.HasSuffix(last.GetDescription(), reviewApproval):
		// The review that approved this head is dismissed, or no longer its author's latest.
		g.State = "pending"
		return g, e.postGate(ctx, g.SHA, g.State, "the approving review is withdrawn: a maintainer must approve this head")
	case last == nil || last.GetState() == "success" && !strings.HasSuffix(last.GetDescription(), commandApproval):
		// No gate yet, or a success that is no maintainer's approval: by the paths, again.
		return e.gateByPaths(ctx, g, n, def)
	}
	fmt.Fprintf(e.Out, "%s: no maintainer's review approves %s; the gate stays %s (%s)\n", HumanApprovalContext, g.SHA, last.GetState(), last.GetDescription())
	return g, nil
}

// gateByPaths posts the gate of g.SHA by the paths it changes from the default branch (GitHub's
// compare of def...SHA: the pull request's own file list follows its base, which its author may
// change meanwhile), unless the pull request's head or base moved while they were listed (the
// next event evaluates it again).
func (e *Env) gateByPaths(ctx context.Context, g *HumanGate, n int, def string) (*HumanGate, error) {
	cmp, _, err := e.Client.Repositories.CompareCommits(ctx, e.Owner, e.Repo, def, g.SHA, nil)
	if err != nil {
		return nil, fmt.Errorf("comparing %s with %s: %w", g.SHA, def, err)
	}
	var files []string
	for _, f := range cmp.Files {
		files = append(files, f.GetFilename())
		if p := f.GetPreviousFilename(); p != "" {
			files = append(files, p)
		}
	}
	again, _, err := e.Client.PullRequests.Get(ctx, e.Owner, e.Repo, n)
	if err != nil {
		return nil, fmt.Errorf("reading #%d: %w", n, err)
	}
	if head, base := again.GetHead().GetSHA(), again.GetBase().GetRef(); head != g.SHA || base != def {
		fmt.Fprintf(e.Out, "#%d moved while its files were listed (head %s, base %s): no gate is posted\n", n, head, base)
		return g, nil
	}
	g.HumanRequired = e.humanRequired(files)
	switch {
	case len(cmp.Files) >= maxListedFiles:
		g.State = "pending"
		return g, e.postGate(ctx, g.SHA, g.State, fmt.Sprintf("%d files or more changed: a maintainer must approve this head", maxListedFiles))
	case len(g.HumanRequired) > 0:
		g.State = "pending"
		return g, e.postGate(ctx, g.SHA, g.State, "touches human-required paths ("+strings.Join(g.HumanRequired, ", ")+"): a maintainer must approve this head")
	}
	// An ask bound to this head is open (the reviewer asked for a person): it waits for a
	// maintainer, whatever paths it changes.
	if held, err := e.holdForAsk(ctx, g, n); held || err != nil {
		return g, err
	}
	g.State = "success"
	if err := e.postGate(ctx, g.SHA, g.State, noHumanPath); err != nil {
		return g, err
	}
	// Post, then check: the reviewer posts its ask before it reads the gate (holdGate), so an
	// ask it made while this success was in flight is seen here, and the head held again.
	_, err = e.holdForAsk(ctx, g, n)
	return g, err
}

// holdForAsk posts human-approval pending on g's head when an ask bound to it is open on pull
// request n, and reports whether it did.
func (e *Env) holdForAsk(ctx context.Context, g *HumanGate, n int) (bool, error) {
	a, err := e.openAskFor(ctx, n, g.SHA)
	if err != nil || a == nil {
		return false, err
	}
	g.State = "pending"
	return true, e.postGate(ctx, g.SHA, g.State, "the ask "+a.Token+" of "+a.Actor+" is open: a maintainer must approve this head")
}

// approvedBy is a maintainer whose latest review of pull request n approves head ("" when
// none does). A review of another commit approves nothing, nor one submitted before the pull
// request's base last changed (it approved a change into another branch).
func (e *Env) approvedBy(ctx context.Context, n int, head string) (string, error) {
	since, err := e.baseChangedAt(ctx, n)
	if err != nil {
		return "", err
	}
	latest := map[string]*github.PullRequestReview{}
	var order []string
	opts := &github.ListOptions{PerPage: 100}
	for {
		rs, resp, err := e.Client.PullRequests.ListReviews(ctx, e.Owner, e.Repo, n, opts)
		if err != nil {
			return "", fmt.Errorf("listing the reviews of #%d: %w", n, err)
		}
		for _, r := range rs {
			login := strings.ToLower(r.GetUser().GetLogin())
			if r.GetState() == "COMMENTED" || r.GetState() == "PENDING" {
				continue // a comment neither approves nor withdraws an approval
			}
			if !since.IsZero() && !r.GetSubmittedAt().After(since) {
				continue // given while the pull request went into another branch
			}
			if _, ok := latest[login]; !ok {
				order = append(order, login)
			}
			latest[login] = r
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if len(order) == 0 {
		return "", nil
	}
	ms, err := Maintainers(ctx, e)
	if err != nil {
		return "", err
	}
	for _, login := range order {
		r := latest[login]
		if r.GetState() == "APPROVED" && strings.EqualFold(r.GetCommitID(), head) && ms.Has(r.GetUser().GetLogin()) {
			return r.GetUser().GetLogin(), nil
		}
	}
	return "", nil
}

// latestGate is the newest human-approval status of sha (nil when it has none).
func (e *Env) latestGate(ctx context.Context, sha string) (*github.RepoStatus, error) {
	opts := &github.ListOptions{PerPage: 100}
	for {
		sts, resp, err := e.Client.Repositories.ListStatuses(ctx, e.Owner, e.Repo, sha, opts)
		if err != nil {
			return nil, fmt.Errorf("reading the statuses of %s: %w", sha, err)
		}
		for _, s := range sts { // newest first
			if s.GetContext() == HumanApprovalContext {
				return s, nil
			}
		}
		if resp.NextPage == 0 {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
}

// baseChangedAt is when pull request n's base last changed (its timeline's base_ref_changed;
// zero when it never did).
func (e *Env) baseChangedAt(ctx context.Context, n int) (time.Time, error) {
	var at time.Time
	opts := &github.ListOptions{PerPage: 100}
	for {
		evs, resp, err := e.Client.Issues.ListIssueTimeline(ctx, e.Owner, e.Repo, n, opts)
		if err != nil {
			return time.Time{}, fmt.Errorf("reading the timeline of #%d: %w", n, err)
		}
		for _, ev := range evs {
			if ev.GetEvent() == "base_ref_changed" && ev.GetCreatedAt().After(at) {
				at = ev.GetCreatedAt().Time
			}
		}
		if resp.NextPage == 0 {
			return at, nil
		}
		opts.Page = resp.NextPage
	}
}
