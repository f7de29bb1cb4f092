package ghrun

import (
	"context"
	"fmt"
	"strconv"

	"github.com/google/go-github/v62/github"
)

// The code host as the conformance probe reads it: a work item to propose against, the newest
// run of a workflow, and what a pull request's base protection and head statuses say of it.

// PullState is what GitHub says of a pull request, as its auto-merge reads it.
type PullState struct {
	Merged    bool
	MergedBy  string
	Head      string // the head commit
	Base      string // the base branch
	AutoMerge bool   // auto-merge is armed
	// Required are the status checks the base branch's protection requires.
	Required []string
	// States and URLs are the latest state and target URL of each status context on the head.
	States, URLs map[string]string
}

// OpenWorkItem opens an issue with title and body and returns its number.
func (r *Runner) OpenWorkItem(ctx context.Context, title, body string) (int, error) {
	is, _, err := r.gh.Issues.Create(ctx, r.owner, r.repo, &github.IssueRequest{Title: github.String(title), Body: github.String(body)})
	if err != nil {
		return 0, fmt.Errorf("opening a work item: %w", err)
	}
	return is.GetNumber(), nil
}

// LatestDispatch is the id of the newest workflow_dispatch run of workflow file ("" for none).
func (r *Runner) LatestDispatch(ctx context.Context, file string) (string, error) {
	runs, _, err := r.gh.Actions.ListWorkflowRunsByFileName(ctx, r.owner, r.repo, file, &github.ListWorkflowRunsOptions{Event: "workflow_dispatch"})
	if err != nil {
		return "", fmt.Errorf("listing the runs of %s: %w", file, err)
	}
	if len(runs.WorkflowRuns) == 0 {
		return "", nil
	}
	return strconv.FormatInt(runs.WorkflowRuns[0].GetID(), 10), nil
}

// Pull reads pull request n, its base branch's protection and its head's statuses.
func (r *Runner) Pull(ctx context.Context, n int) (PullState, error) {
	pull, _, err := r.gh.PullRequests.Get(ctx, r.owner, r.repo, n)
	if err != nil {
		return PullState{}, fmt.Errorf("reading #%d: %w", n, err)
	}
	p := PullState{Merged: pull.GetMerged(), MergedBy: pull.GetMergedBy().GetLogin(), Head: pull.GetHead().GetSHA(),
		Base: pull.GetBase().GetRef(), AutoMerge: pull.GetAutoMerge() != nil, States: map[string]string{}, URLs: map[string]string{}}
	prot, _, err := r.gh.Repositories.GetBranchProtection(ctx, r.owner, r.repo, p.Base)
	if err != nil {
		return PullState{}, fmt.Errorf("reading the protection of %s (autonomy provision sets it): %w", p.Base, err)
	}
	p.Required = prot.GetRequiredStatusChecks().GetContexts()
	status, _, err := r.gh.Repositories.GetCombinedStatus(ctx, r.owner, r.repo, p.Head, nil)
	if err != nil {
		return PullState{}, fmt.Errorf("reading the statuses of %s: %w", p.Head, err)
	}
	for _, st := range status.Statuses {
		p.States[st.GetContext()], p.URLs[st.GetContext()] = st.GetState(), st.GetTargetURL()
	}
	return p, nil
}

// PostStatus posts a commit status of context on sha.
func (r *Runner) PostStatus(ctx context.Context, sha, context, state, desc string) error {
	st := &github.RepoStatus{State: github.String(state), Context: github.String(context), Description: github.String(desc)}
	if _, _, err := r.gh.Repositories.CreateStatus(ctx, r.owner, r.repo, sha, st); err != nil {
		return fmt.Errorf("posting %s on %s: %w", context, sha, err)
	}
	return nil
}
