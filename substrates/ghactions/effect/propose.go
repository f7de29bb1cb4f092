package effect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghevent"
)

// BranchPrefix starts every branch a proposal is pushed to: autonomy/<actor>/<subject>.
const BranchPrefix = "autonomy/"

// ScheduledSubject is the subject of a proposer fired without a work item (by a schedule): its
// branch is autonomy/<actor>/scheduled, one standing pull request updated by each run.
const ScheduledSubject = "scheduled"

// Proposal is what Propose did.
type Proposal struct {
	// Files are the paths the proposal changes.
	Files []string
	// Branch is the branch pushed, Head the commit it points at; PR the pull request opened or
	// updated (0 at the cap).
	Branch, Head string
	PR           int
	// Created is whether the pull request is new; Capped whether the cap kept it from opening.
	Created, Capped bool
	// HumanRequired are the changed paths under policy.box.risk.human_required_paths or a
	// governing document.
	HumanRequired []string
	// Signed is whether the commits were created through the Git Data API (commit_signing:
	// verified-api), which GitHub signs.
	Signed bool
	// Engaged is the ask posted on the pull request when it touches human-required paths.
	Engaged *Ask
	// AutoMerge is whether auto-merge is armed; AutoMergeError why not.
	AutoMerge      bool
	AutoMergeError string
}

var safeSubject = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`) })

// Propose turns the commits of bundle into a pull request: it refuses (saying so on the work
// item) a change outside the actor's scope, to the workflows, or that does not apply to the
// current default branch; pushes autonomy/<actor>/<subject>; opens or updates the one pull
// request of that subject, labels it, and dispatches its reviewer and the checks. A missing
// bundle is no proposal: nothing is done.
func Propose(ctx context.Context, e *Env, bundle string) (*Proposal, error) {
	if _, err := os.Stat(bundle); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(e.Out, "%s made no commits: nothing to propose\n", e.Actor)
		return nil, nil
	}
	subject, item, err := e.proposalSubject()
	if err != nil {
		return nil, err
	}
	if err := e.refusePaused(ctx, item); err != nil {
		return nil, err
	}
	def, abs, err := e.fetchBase(ctx, bundle)
	if err != nil {
		return nil, err
	}
	mb, files, err := e.proposedChanges(ctx, item, def, abs)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		fmt.Fprintf(e.Out, "%s's commits change no file: nothing to propose\n", e.Actor)
		return nil, nil
	}
	head, files, err := e.rebasedHead(ctx, item, def, mb, files)
	if err != nil {
		return nil, err
	}

	p := &Proposal{Files: files, Branch: BranchPrefix + e.Actor + "/" + subject, HumanRequired: e.humanRequired(files)}
	open, err := e.openAgentPulls(ctx, def)
	if err != nil {
		return nil, err
	}
	existing := e.pullFrom(open, p.Branch, def)
	if existing != nil && hasLabel(existing.Labels, e.Policy.PausedLabel()) {
		return nil, &Refused{e.pausedNote(existing.GetNumber())} // its branch is not pushed
	}
	if err := e.pushProposal(ctx, p, head); err != nil {
		return nil, err
	}
	if capped, err := e.atCap(ctx, p, item, open, existing); err != nil {
		return nil, err
	} else if capped {
		return p, nil
	}
	nodeID, err := e.openOrUpdatePull(ctx, p, existing, item, def, head)
	if err != nil {
		return nil, err
	}
	if err := e.labelAndDispatch(ctx, p, def, nodeID); err != nil {
		return nil, err
	}
	// Last: the pull request stands, reviewed and checked, whether or not a person can be
	// engaged; a failure to engage fails the job, visibly.
	if len(p.HumanRequired) > 0 {
		if err := e.engageHumanRequired(ctx, p); err != nil {
			return nil, err
		}
	}
	verb := "updated"
	if p.Created {
		verb = "opened"
	}
	fmt.Fprintf(e.Out, "%s #%d from %s (%d files)\n", verb, p.PR, p.Branch, len(files))
	return p, nil
}

// proposalSubject is the subject the branch is named after and the work item it answers (0
// for none), checked with the actor: both name the branch.
func (e *Env) proposalSubject() (string, int, error) {
	subject, item := e.Subject, 0
	if subject == "" {
		// A proposer without a work item (one on a schedule) has one standing proposal.
		subject = ScheduledSubject
	} else {
		n, err := ghevent.ItemNumber(subject)
		if err != nil {
			return "", 0, fmt.Errorf("the subject: %w", err)
		}
		item = n
	}
	if !safeSubject().MatchString(e.Actor) {
		return "", 0, fmt.Errorf("actor %q must be a name (letters, digits, . _ -): it names the branch", e.Actor)
	}
	return subject, item, nil
}

// fetchBase reads the repository's default branch and fetches it to refs/autonomy/base; it
// returns that branch and the absolute path of bundle.
func (e *Env) fetchBase(ctx context.Context, bundle string) (string, string, error) {
	def, err := e.DefaultBranch(ctx)
	if err != nil {
		return "", "", err
	}
	abs, err := filepath.Abs(bundle)
	if err != nil {
		return "", "", err
	}
	if _, err := e.git(append(e.remoteArgs(), "fetch", "--quiet", "--no-tags", e.Remote, "+refs/heads/"+def+":refs/autonomy/base")...); err != nil {
		return "", "", err
	}
	return def, abs, nil
}

// refuse says on the work item (or, without one, in the run's log) why the proposal was not
// opened, and returns the refusal.
func (e *Env) refuse(ctx context.Context, item int, reason string, files []string) error {
	msg := fmt.Sprintf("**%s**: the proposal was not opened: %s", e.Actor, reason)
	for _, f := range files {
		msg += "\n- `" + f + "`"
	}
	if e.RunURL != "" {
		msg += "\n\n(" + e.RunURL + ")"
	}
	if item == 0 {
		fmt.Fprintln(e.Out, msg) // no work item to say it on: the run's log says it
	} else if err := e.comment(ctx, item, msg); err != nil {
		return fmt.Errorf("%s; and saying so on #%d failed: %w", reason, item, err)
	}
	return &Refused{reason + ": " + strings.Join(files, ", ")}
}

// proposedChanges fetches the bundle at abs to refs/autonomy/proposed and returns its merge
// base with the default branch def and the files its commits change, refusing commits that
// do not read here or change what the actor may not.
func (e *Env) proposedChanges(ctx context.Context, item int, def, abs string) (string, []string, error) {
	if _, err := e.git("fetch", "--quiet", "--no-tags", abs, "+HEAD:refs/autonomy/proposed"); err != nil {
		return "", nil, e.refuse(ctx, item, "its commits do not apply to the repository (the bundle does not read here)", nil)
	}
	mb, err := e.git("merge-base", "refs/autonomy/base", "refs/autonomy/proposed")
	if err != nil {
		return "", nil, e.refuse(ctx, item, "its commits share no history with "+def, nil)
	}
	files, reason, bad, err := e.proposedFiles(mb, "refs/autonomy/proposed")
	if err != nil {
		return "", nil, err
	}
	if reason != "" {
		return "", nil, e.refuse(ctx, item, reason, bad)
	}
	return mb, files, nil
}

// rebasedHead puts the proposal on the default branch def and returns the commit to push and
// the files it changes, refusing conflicts and what the push would change that the actor may
// not.
func (e *Env) rebasedHead(ctx context.Context, item int, def, mb string, files []string) (string, []string, error) {
	head, conflicts, err := e.rebase(mb)
	if err != nil {
		return "", nil, err
	}
	if len(conflicts) > 0 {
		return "", nil, e.refuse(ctx, item, "it does not apply to the current "+def+"; these files conflict", conflicts)
	}
	// What is pushed is checked too: the rebased head's difference from the default branch.
	files, reason, bad, err := e.pushedFiles(files, head)
	if err != nil {
		return "", nil, err
	}
	if reason != "" {
		return "", nil, e.refuse(ctx, item, reason, bad)
	}
	return head, files, nil
}

// pullFrom is the pull request of open that is the agent's proposal from branch into the
// default branch def (agentPull), nil if none is.
func (e *Env) pullFrom(open []*github.PullRequest, branch, def string) *github.PullRequest {
	var existing *github.PullRequest
	for _, pr := range open {
		if pr.GetHead().GetRef() == branch && e.agentPull(pr, def) {
			existing = pr
		}
	}
	return existing
}

// pushProposal pushes head to the proposal's branch and records the commit the branch points
// at, through the Git Data API when commits are signed.
func (e *Env) pushProposal(ctx context.Context, p *Proposal, head string) error {
	if e.Policy.Box.GHActions.CommitSigning == SigningVerifiedAPI {
		base, err := e.git("rev-parse", "refs/autonomy/base")
		if err != nil {
			return err
		}
		// The local head keeps naming the proposal (its title); the branch holds GitHub's copies.
		if p.Head, err = e.pushSigned(ctx, base, head, p.Branch); err != nil {
			return err
		}
		p.Signed = true
	} else if _, err := e.git(append(e.remoteArgs(), "push", "--quiet", "--force", e.Remote, head+":refs/heads/"+p.Branch)...); err != nil {
		return err
	} else {
		p.Head = head
	}
	return nil
}

// atCap is whether opening a new pull request would pass policy.box.max_open_agent_prs; if so
// it marks p capped and says so on the work item and in the run's log.
func (e *Env) atCap(ctx context.Context, p *Proposal, item int, open []*github.PullRequest, existing *github.PullRequest) (bool, error) {
	max := e.Policy.maxOpenAgentPRs()
	if existing != nil || max <= 0 || len(open) < max {
		return false, nil
	}
	p.Capped = true
	msg := fmt.Sprintf("**%s**: %d agent pull requests are open, the most `policy.box.max_open_agent_prs` allows; the change is on branch `%s`, and no pull request was opened.", e.Actor, len(open), p.Branch)
	if item != 0 {
		if err := e.comment(ctx, item, msg); err != nil {
			return true, err
		}
	}
	fmt.Fprintln(e.Out, msg)
	return true, nil
}

// openOrUpdatePull opens the proposal's pull request against def, titled after head, or
// updates the body of the existing one; it returns the pull request's node ID.
func (e *Env) openOrUpdatePull(ctx context.Context, p *Proposal, existing *github.PullRequest, item int, def, head string) (string, error) {
	body := fmt.Sprintf("Proposed by the agent `%s`", e.Actor)
	if item != 0 {
		body = fmt.Sprintf("Work item: #%d\n\n", item) + body
	}
	if e.RunURL != "" {
		body += " in " + e.RunURL
	}
	body += ".\n"
	if existing != nil {
		p.PR = existing.GetNumber()
		if _, _, err := e.Client.PullRequests.Edit(ctx, e.Owner, e.Repo, p.PR, &github.PullRequest{Body: github.String(body)}); err != nil {
			return "", fmt.Errorf("updating #%d: %w", p.PR, err)
		}
		return existing.GetNodeID(), nil
	}
	title, err := e.git("log", "-1", "--format=%s", head)
	if err != nil {
		return "", err
	}
	pr, _, err := e.Client.PullRequests.Create(ctx, e.Owner, e.Repo, &github.NewPullRequest{
		Title: github.String(title), Head: github.String(p.Branch), Base: github.String(def), Body: github.String(body)})
	if err != nil {
		return "", fmt.Errorf("opening the pull request: %w", err)
	}
	p.PR, p.Created = pr.GetNumber(), true
	return pr.GetNodeID(), nil
}

// labelAndDispatch labels the pull request, dispatches its human gate, arms auto-merge on
// nodeID and dispatches its reviewer and the checks, in that order.
func (e *Env) labelAndDispatch(ctx context.Context, p *Proposal, def, nodeID string) error {
	labels := []string{e.Policy.label("in-review")}
	if len(p.HumanRequired) > 0 {
		labels = append(labels, e.Policy.label("input-required"))
	}
	if _, _, err := e.Client.Issues.AddLabelsToIssue(ctx, e.Owner, e.Repo, p.PR, labels); err != nil {
		return fmt.Errorf("labelling #%d: %w", p.PR, err)
	}
	// The human gate of the head just pushed is posted by the control workflow (this job may
	// push code, so it posts no status: humangate.go); until then the head has none, and
	// nothing merges it.
	if err := e.dispatch(ctx, ControlWorkflow, def, map[string]any{GateInput: strconv.Itoa(p.PR)}); err != nil {
		return fmt.Errorf("dispatching the human gate (%s): %w", ControlWorkflow, err)
	}
	if err := e.armAutoMerge(ctx, nodeID, p.Head); err != nil {
		// The pull request stands; it merges by hand once protection is satisfied.
		p.AutoMergeError = err.Error()
		fmt.Fprintf(e.Out, "warning: auto-merge not armed on #%d: %v (run autonomy provision)\n", p.PR, err)
	} else {
		p.AutoMerge = true
	}
	// A pull request opened with the job's token fires no pull_request event: the reviewer and
	// the checks are dispatched here.
	if e.ReviewerWorkflow != "" && e.ReviewerInput != "" {
		if err := e.dispatch(ctx, e.ReviewerWorkflow, def, map[string]any{e.ReviewerInput: strconv.Itoa(p.PR)}); err != nil {
			return fmt.Errorf("dispatching the reviewer %s: %w", e.ReviewerWorkflow, err)
		}
	}
	for _, wf := range append(slices.Clone(e.Policy.Box.GHActions.DispatchChecks), e.Policy.Box.GHActions.DispatchReviews...) {
		if err := e.dispatch(ctx, wf, p.Branch, nil); err != nil {
			return fmt.Errorf("dispatching %s: %w", wf, err)
		}
	}
	return nil
}

// dispatch fires the workflow file wf on ref with inputs.
func (e *Env) dispatch(ctx context.Context, wf, ref string, inputs map[string]any) error {
	_, err := e.Client.Actions.CreateWorkflowDispatchEventByFileName(ctx, e.Owner, e.Repo, wf, github.CreateWorkflowDispatchEventRequest{Ref: ref, Inputs: inputs})
	return err
}

// rebase puts the proposal on the current default branch: as it is when it already sits on
// it, else by cherry-picking its commits in a worktree of its own. It returns the commit to
// push, or the paths that conflict.
func (e *Env) rebase(mb string) (string, []string, error) {
	base, err := e.git("rev-parse", "refs/autonomy/base")
	if err != nil {
		return "", nil, err
	}
	proposed, err := e.git("rev-parse", "refs/autonomy/proposed")
	if err != nil {
		return "", nil, err
	}
	if mb == base {
		return proposed, nil, nil
	}
	dir, err := os.MkdirTemp("", "autonomy-propose-")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(dir)
	wt := filepath.Join(dir, "wt")
	if _, err := e.git("worktree", "add", "--quiet", "--detach", wt, base); err != nil {
		return "", nil, err
	}
	defer e.git("worktree", "remove", "--force", wt)
	sub := &Env{Dir: wt}
	if _, err := sub.git("cherry-pick", "--allow-empty", mb+"..refs/autonomy/proposed"); err != nil {
		out, _ := sub.git("diff", "--name-only", "--diff-filter=U")
		sub.git("cherry-pick", "--abort")
		var conflicts []string
		for _, f := range strings.Split(out, "\n") {
			if f != "" {
				conflicts = append(conflicts, f)
			}
		}
		if len(conflicts) == 0 {
			return "", nil, err
		}
		return "", conflicts, nil
	}
	head, err := sub.git("rev-parse", "HEAD")
	return head, nil, err
}

// agentPull reports whether pull request pr can be an agent's proposal: its head branch is an
// autonomy/ branch of this repository itself and its base the default branch def. A pull request
// from a fork (head.repo names another repository, or is null: the fork was deleted) is never
// the agent's, whatever its branch is named: anyone can open one.
func (e *Env) agentPull(pr *github.PullRequest, def string) bool {
	return strings.HasPrefix(pr.GetHead().GetRef(), BranchPrefix) && pr.GetBase().GetRef() == def && e.ownHead(pr)
}

// ownHead reports whether pr's head branch is a branch of this repository itself, not of a fork
// (GitHub's head.repo: null when the fork was deleted is none of ours either).
func (e *Env) ownHead(pr *github.PullRequest) bool {
	return strings.EqualFold(pr.GetHead().GetRepo().GetFullName(), e.Owner+"/"+e.Repo)
}

// openAgentPulls lists the open pull requests that can be agents' proposals (agentPull) into
// the default branch def.
func (e *Env) openAgentPulls(ctx context.Context, def string) ([]*github.PullRequest, error) {
	var out []*github.PullRequest
	opts := &github.PullRequestListOptions{State: "open", Base: def, ListOptions: github.ListOptions{PerPage: 100}}
	for {
		prs, resp, err := e.Client.PullRequests.List(ctx, e.Owner, e.Repo, opts)
		if err != nil {
			return nil, fmt.Errorf("listing pull requests: %w", err)
		}
		for _, pr := range prs {
			if e.agentPull(pr, def) {
				out = append(out, pr)
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}
