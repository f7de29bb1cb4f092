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

	"github.com/google/go-github/v62/github"
)

// workflowGlob is what no agent may change: the workflows decide what every job may do.
const workflowGlob = ".github/workflows/**"

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
	// HumanRequired are the changed paths under policy.box.risk.human_required_paths.
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

var safeSubject = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)

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
	subject, item := e.Subject, 0
	if subject == "" {
		// A proposer without a work item (one on a schedule) has one standing proposal.
		subject = ScheduledSubject
	} else {
		n, err := strconv.Atoi(subject)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("the subject %q is not a work item number", subject)
		}
		item = n
	}
	if !safeSubject.MatchString(e.Actor) {
		return nil, fmt.Errorf("actor %q must be a name (letters, digits, . _ -): it names the branch", e.Actor)
	}
	repo, _, err := e.Client.Repositories.Get(ctx, e.Owner, e.Repo)
	if err != nil {
		return nil, fmt.Errorf("reading the repository: %w", err)
	}
	def := repo.GetDefaultBranch()
	abs, err := filepath.Abs(bundle)
	if err != nil {
		return nil, err
	}
	if _, err := e.git(append(e.remoteArgs(), "fetch", "--quiet", "--no-tags", e.Remote, "+refs/heads/"+def+":refs/autonomy/base")...); err != nil {
		return nil, err
	}
	refuse := func(reason string, files []string) (*Proposal, error) {
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
			return nil, fmt.Errorf("%s; and saying so on #%d failed: %w", reason, item, err)
		}
		return nil, &Refused{reason + ": " + strings.Join(files, ", ")}
	}
	if _, err := e.git("fetch", "--quiet", "--no-tags", abs, "+HEAD:refs/autonomy/proposed"); err != nil {
		return refuse("its commits do not apply to the repository (the bundle does not read here)", nil)
	}
	mb, err := e.git("merge-base", "refs/autonomy/base", "refs/autonomy/proposed")
	if err != nil {
		return refuse("its commits share no history with "+def, nil)
	}
	files, reason, bad, err := e.proposedFiles(mb, "refs/autonomy/proposed")
	if err != nil {
		return nil, err
	}
	if reason != "" {
		return refuse(reason, bad)
	}
	if len(files) == 0 {
		fmt.Fprintf(e.Out, "%s's commits change no file: nothing to propose\n", e.Actor)
		return nil, nil
	}
	head, conflicts, err := e.rebase(mb)
	if err != nil {
		return nil, err
	}
	if len(conflicts) > 0 {
		return refuse("it does not apply to the current "+def+"; these files conflict", conflicts)
	}
	// What is pushed is checked too: the rebased head's difference from the default branch.
	if files, reason, bad, err = e.pushedFiles(files, head); err != nil {
		return nil, err
	} else if reason != "" {
		return refuse(reason, bad)
	}

	p := &Proposal{Files: files, Branch: BranchPrefix + e.Actor + "/" + subject, HumanRequired: matching(files, e.HumanPaths)}
	open, err := e.openAgentPulls(ctx)
	if err != nil {
		return nil, err
	}
	var existing *github.PullRequest
	nodeID := ""
	for _, pr := range open {
		if pr.GetHead().GetRef() == p.Branch {
			existing = pr
		}
	}
	if e.Policy.Box.GHActions.CommitSigning == SigningVerifiedAPI {
		base, err := e.git("rev-parse", "refs/autonomy/base")
		if err != nil {
			return nil, err
		}
		// The local head keeps naming the proposal (its title); the branch holds GitHub's copies.
		if p.Head, err = e.pushSigned(ctx, base, head, p.Branch); err != nil {
			return nil, err
		}
		p.Signed = true
	} else if _, err := e.git(append(e.remoteArgs(), "push", "--quiet", "--force", e.Remote, head+":refs/heads/"+p.Branch)...); err != nil {
		return nil, err
	} else {
		p.Head = head
	}
	if max := e.Policy.Box.MaxOpenAgentPRs; existing == nil && max > 0 && len(open) >= max {
		p.Capped = true
		msg := fmt.Sprintf("**%s**: %d agent pull requests are open, the most `policy.box.max_open_agent_prs` allows; the change is on branch `%s`, and no pull request was opened.", e.Actor, len(open), p.Branch)
		if item != 0 {
			if err := e.comment(ctx, item, msg); err != nil {
				return nil, err
			}
		}
		fmt.Fprintln(e.Out, msg)
		return p, nil
	}
	body := fmt.Sprintf("Proposed by the agent `%s`", e.Actor)
	if item != 0 {
		body = fmt.Sprintf("Work item: #%d\n\n", item) + body
	}
	if e.RunURL != "" {
		body += " in " + e.RunURL
	}
	body += ".\n"
	if existing != nil {
		p.PR, nodeID = existing.GetNumber(), existing.GetNodeID()
		if _, _, err := e.Client.PullRequests.Edit(ctx, e.Owner, e.Repo, p.PR, &github.PullRequest{Body: github.String(body)}); err != nil {
			return nil, fmt.Errorf("updating #%d: %w", p.PR, err)
		}
	} else {
		title, err := e.git("log", "-1", "--format=%s", head)
		if err != nil {
			return nil, err
		}
		pr, _, err := e.Client.PullRequests.Create(ctx, e.Owner, e.Repo, &github.NewPullRequest{
			Title: github.String(title), Head: github.String(p.Branch), Base: github.String(def), Body: github.String(body)})
		if err != nil {
			return nil, fmt.Errorf("opening the pull request: %w", err)
		}
		p.PR, p.Created, nodeID = pr.GetNumber(), true, pr.GetNodeID()
	}
	labels := []string{e.Policy.label("in-review")}
	if len(p.HumanRequired) > 0 {
		labels = append(labels, e.Policy.label("input-required"))
	}
	if _, _, err := e.Client.Issues.AddLabelsToIssue(ctx, e.Owner, e.Repo, p.PR, labels); err != nil {
		return nil, fmt.Errorf("labelling #%d: %w", p.PR, err)
	}
	// The human gate of the head just pushed is posted by the control workflow (this job may
	// push code, so it posts no status: humangate.go); until then the head has none, and
	// nothing merges it.
	if _, err := e.Client.Actions.CreateWorkflowDispatchEventByFileName(ctx, e.Owner, e.Repo, ControlWorkflow, github.CreateWorkflowDispatchEventRequest{
		Ref: def, Inputs: map[string]any{GateInput: strconv.Itoa(p.PR)}}); err != nil {
		return nil, fmt.Errorf("dispatching the human gate (%s): %w", ControlWorkflow, err)
	}
	if err := e.armAutoMerge(ctx, nodeID); err != nil {
		// The pull request stands; it merges by hand once protection is satisfied.
		p.AutoMergeError = err.Error()
		fmt.Fprintf(e.Out, "warning: auto-merge not armed on #%d: %v (run autonomy provision)\n", p.PR, err)
	} else {
		p.AutoMerge = true
	}
	// A pull request opened with the job's token fires no pull_request event: the reviewer and
	// the checks are dispatched here.
	if e.ReviewerWorkflow != "" && e.ReviewerInput != "" {
		if _, err := e.Client.Actions.CreateWorkflowDispatchEventByFileName(ctx, e.Owner, e.Repo, e.ReviewerWorkflow, github.CreateWorkflowDispatchEventRequest{
			Ref: def, Inputs: map[string]any{e.ReviewerInput: strconv.Itoa(p.PR)}}); err != nil {
			return nil, fmt.Errorf("dispatching the reviewer %s: %w", e.ReviewerWorkflow, err)
		}
	}
	for _, wf := range append(slices.Clone(e.Policy.Box.GHActions.DispatchChecks), e.Policy.Box.GHActions.DispatchReviews...) {
		if _, err := e.Client.Actions.CreateWorkflowDispatchEventByFileName(ctx, e.Owner, e.Repo, wf, github.CreateWorkflowDispatchEventRequest{Ref: p.Branch}); err != nil {
			return nil, fmt.Errorf("dispatching %s: %w", wf, err)
		}
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

// openAgentPulls lists the open pull requests from autonomy/ branches.
func (e *Env) openAgentPulls(ctx context.Context) ([]*github.PullRequest, error) {
	var out []*github.PullRequest
	opts := &github.PullRequestListOptions{State: "open", ListOptions: github.ListOptions{PerPage: 100}}
	for {
		prs, resp, err := e.Client.PullRequests.List(ctx, e.Owner, e.Repo, opts)
		if err != nil {
			return nil, fmt.Errorf("listing pull requests: %w", err)
		}
		for _, pr := range prs {
			if strings.HasPrefix(pr.GetHead().GetRef(), BranchPrefix) {
				out = append(out, pr)
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}
