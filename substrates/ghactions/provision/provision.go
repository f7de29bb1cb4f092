// Package provision makes a GitHub repository match what a gh-actions installation assumes
// (autonomy provision): the default branch protected so that nothing merges without the
// agent-review status, the human gate (when the profile has human-required paths) and the
// checks, auto-merge and branch deletion on, the default workflow token read-only, Actions
// allowed to open pull requests, a label per task state, the variables the workflows read and
// the environments gating approval steps, reviewed by the maintainers. It is idempotent, never weakens a setting that is already
// stricter, and can only plan (dry run).
package provision

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/ir"
)

// Policy is the part of the profile's policy.box provisioning reads.
type Policy struct {
	TaskStates map[string]string
	// RequiredChecks are the status checks required besides agent-review (policy.box.gh-actions
	// requiredChecks; ci when unset).
	RequiredChecks []string
	// Variables are the repository variables the workflows read, with the value to create
	// each with when it is missing.
	Variables [][2]string
	// Environments are the GitHub environments gating the approval steps of the compiled
	// workflow playbooks (the manifest's actors[].environments), sorted.
	Environments []string
	// HumanGate requires the human-approval status too: the profile has human-required paths
	// (policy.box.risk.human_required_paths, or a document role that gates), or a reviewer
	// whose result may ask for a person (humanApprovalRequired).
	HumanGate bool
	// NoCodeFlow: no actor proposes or reviews code (code:propose, code:review), so nothing
	// posts agent-review: the default branch's protection is left as it is, since requiring the
	// status would hold every pull request, a person's too, forever.
	NoCodeFlow bool
	// MaintainersVar is policy.box.human.maintainers_var (maintainers.DefaultVar when empty):
	// the environments' required reviewers.
	MaintainersVar string
}

// StatusContext is the status autonomy gh review posts.
const StatusContext = "agent-review"

// HumanApprovalContext is the human gate's status (effect.HumanApprovalContext): only a
// maintainer's approval of a pull request's head turns it to success when the pull request
// touches human-required paths.
const HumanApprovalContext = "human-approval"

// Step is one setting: what it is, what it was, what it should be, and what was done.
type Step struct {
	What   string `json:"what"`
	From   string `json:"from"`
	To     string `json:"to"`
	Action string `json:"action"` // "create", "update", "ok" (already so), "left" (stricter, or set by the owner)
	// Note says why a setting was left, or what changing it means.
	Note string `json:"note,omitempty"`
}

// Provision plans (dryRun) or makes the changes, returning every step in order. Errors of
// independent steps are all collected.
func Provision(ctx context.Context, c *github.Client, owner, repo string, p Policy, dryRun bool) ([]Step, error) {
	r, _, err := c.Repositories.Get(ctx, owner, repo)
	if err != nil {
		return nil, fmt.Errorf("reading %s/%s: %w", owner, repo, err)
	}
	pv := &provisioner{c: c, owner: owner, repo: repo, dry: dryRun}
	pv.settings(ctx, r)
	pv.workflowPermissions(ctx)
	if p.NoCodeFlow {
		pv.step(unprotected("branch protection of "+r.GetDefaultBranch(), "not changed"), nil)
	} else {
		pv.protection(ctx, r.GetDefaultBranch(), p)
	}
	pv.labels(ctx, p)
	pv.variables(ctx, p)
	pv.environments(ctx, p)
	return pv.steps, errors.Join(pv.errs...)
}

// unprotected is the step that leaves the branch protection of a fleet with no code flow
// (Policy.NoCodeFlow) as it is.
func unprotected(what, from string) Step {
	return Step{What: what, From: from, Action: "left", Note: "no actor proposes or reviews code: nothing posts " + StatusContext + ", so requiring it would hold every pull request"}
}

type provisioner struct {
	c           *github.Client
	owner, repo string
	dry         bool
	steps       []Step
	errs        []error
}

func (pv *provisioner) step(s Step, apply func() error) {
	if (s.Action == "create" || s.Action == "update") && !pv.dry {
		if err := apply(); err != nil {
			pv.errs = append(pv.errs, fmt.Errorf("%s: %w", s.What, err))
			s.Note = "failed: " + err.Error()
		}
	}
	pv.steps = append(pv.steps, s)
}

func boolStep(what string, have bool) Step {
	s := Step{What: what, From: fmt.Sprint(have), To: "true", Action: "ok"}
	if !have {
		s.Action = "update"
	}
	return s
}

func (pv *provisioner) settings(ctx context.Context, r *github.Repository) {
	pv.step(boolStep("repository: allow auto-merge", r.GetAllowAutoMerge()), func() error {
		_, _, err := pv.c.Repositories.Edit(ctx, pv.owner, pv.repo, &github.Repository{AllowAutoMerge: github.Bool(true)})
		return err
	})
	pv.step(boolStep("repository: delete branch on merge", r.GetDeleteBranchOnMerge()), func() error {
		_, _, err := pv.c.Repositories.Edit(ctx, pv.owner, pv.repo, &github.Repository{DeleteBranchOnMerge: github.Bool(true)})
		return err
	})
}

// ReadOnlyDefaultNote is what narrowing the repository's default workflow token permissions to
// read means, as the step says it.
const ReadOnlyDefaultNote = "a workflow without a permissions: block gets a read-only GITHUB_TOKEN: " +
	"give any that writes a permissions: block; with write, every such workflow (CI running a proposal's code too) " +
	"could dispatch the fleet's workflows as github-actions[bot], whose subject.actor input the launched run trusts"

func (pv *provisioner) workflowPermissions(ctx context.Context) {
	cur, _, err := pv.c.Repositories.GetDefaultWorkflowPermissions(ctx, pv.owner, pv.repo)
	if err != nil {
		pv.errs = append(pv.errs, fmt.Errorf("reading the workflow permissions: %w", err))
		return
	}
	// The fleet's jobs take their permissions from their permissions: blocks. The default is
	// narrowed to read, never widened: a write default hands actions: write to every workflow
	// without a block (see ReadOnlyDefaultNote). Each PUT sends only the field it changes (both
	// are optional), so one step never undoes the other.
	have := cur.GetDefaultWorkflowPermissions()
	s := Step{What: "actions: default workflow token permissions", From: have, To: "read", Action: "ok"}
	if have != "read" {
		s.Action, s.Note = "update", ReadOnlyDefaultNote
	}
	pv.step(s, func() error {
		_, _, err := pv.c.Repositories.EditDefaultWorkflowPermissions(ctx, pv.owner, pv.repo, github.DefaultWorkflowPermissionRepository{
			DefaultWorkflowPermissions: github.String("read")})
		return err
	})
	// GitHub has one setting for "create and approve pull requests": the propose job opens its
	// pull requests with the job token, which needs it. No job of the fleet submits an
	// approving review (the reviewer posts the agent-review status and a COMMENT review).
	pv.step(boolStep("actions: allow GitHub Actions to create and approve pull requests", cur.GetCanApprovePullRequestReviews()), func() error {
		_, _, err := pv.c.Repositories.EditDefaultWorkflowPermissions(ctx, pv.owner, pv.repo, github.DefaultWorkflowPermissionRepository{
			CanApprovePullRequestReviews: github.Bool(true)})
		return err
	})
}

// protection requires agent-review and the checks on the default branch, up to date, with no
// force pushes and admins included, keeping every stricter setting already there.
func (pv *provisioner) protection(ctx context.Context, branch string, p Policy) {
	what := "branch protection of " + branch
	cur, resp, err := pv.c.Repositories.GetBranchProtection(ctx, pv.owner, pv.repo, branch)
	if err != nil && (resp == nil || resp.StatusCode != http.StatusNotFound) {
		pv.errs = append(pv.errs, fmt.Errorf("reading the %s: %w", what, err))
		return
	}
	want := wantChecks(p)
	req := &github.ProtectionRequest{EnforceAdmins: true, AllowForcePushes: github.Bool(false),
		RequiredStatusChecks: &github.RequiredStatusChecks{Strict: true, Contexts: &[]string{}}}
	var have []string
	var changes, left []string
	if cur == nil {
		changes = append(changes, "required checks "+strings.Join(want, ", ")+", up to date, admins included, no force pushes")
	} else {
		if rc := cur.GetRequiredStatusChecks(); rc != nil {
			have = append(have, *rc.Contexts...)
			if !rc.Strict {
				changes = append(changes, "require branches up to date")
			}
		} else {
			changes = append(changes, "require branches up to date")
		}
		if ea := cur.GetEnforceAdmins(); ea == nil || !ea.Enabled {
			changes = append(changes, "include administrators")
		}
		if fp := cur.GetAllowForcePushes(); fp != nil && fp.Enabled {
			changes = append(changes, "no force pushes")
		}
		// Stricter settings already there are kept as they are.
		if rv := cur.GetRequiredPullRequestReviews(); rv != nil {
			req.RequiredPullRequestReviews = &github.PullRequestReviewsEnforcementRequest{
				DismissStaleReviews: rv.DismissStaleReviews, RequireCodeOwnerReviews: rv.RequireCodeOwnerReviews,
				RequiredApprovingReviewCount: rv.RequiredApprovingReviewCount}
			left = append(left, fmt.Sprintf("%d required approving reviews", rv.RequiredApprovingReviewCount))
		}
		if lh := cur.GetRequireLinearHistory(); lh != nil && lh.Enabled {
			req.RequireLinearHistory = github.Bool(true)
			left = append(left, "linear history")
		}
	}
	contexts := slices.Clone(have)
	for _, w := range want {
		if !slices.Contains(contexts, w) {
			contexts = append(contexts, w)
			if cur != nil {
				changes = append(changes, "require "+w)
			}
		}
	}
	for _, h := range have {
		if !slices.Contains(want, h) {
			left = append(left, "required check "+h)
		}
	}
	req.RequiredStatusChecks.Contexts = &contexts
	s := Step{What: what, From: "none", To: protectionTo(contexts), Action: "ok"}
	if cur != nil {
		s.From = strings.Join(have, ", ") + " required"
	}
	switch {
	case cur == nil:
		s.Action = "create"
	case len(changes) > 0:
		s.Action = "update"
		s.Note = strings.Join(changes, "; ")
	}
	if len(left) > 0 {
		if s.Note != "" {
			s.Note += "; "
		}
		s.Note += "kept: " + strings.Join(left, ", ")
	}
	pv.step(s, func() error {
		_, _, err := pv.c.Repositories.UpdateBranchProtection(ctx, pv.owner, pv.repo, branch, req)
		return err
	})
}

func (pv *provisioner) labels(ctx context.Context, p Policy) {
	for _, e := range ir.States {
		state := e.Name
		name := p.TaskStates[state]
		if name == "" {
			name = state
		}
		_, resp, err := pv.c.Issues.GetLabel(ctx, pv.owner, pv.repo, name)
		s := Step{What: "label " + name + " (" + state + ")", To: "exists", Action: "ok", From: "exists"}
		switch {
		case err == nil:
		case resp != nil && resp.StatusCode == http.StatusNotFound:
			s.From, s.Action = "missing", "create"
		default:
			pv.errs = append(pv.errs, fmt.Errorf("reading label %s: %w", name, err))
			continue
		}
		pv.step(s, func() error {
			_, _, err := pv.c.Issues.CreateLabel(ctx, pv.owner, pv.repo, &github.Label{Name: github.String(name), Color: github.String("ededed"),
				Description: github.String("task state " + state + " (autonomy)")})
			return err
		})
	}
}

func (pv *provisioner) variables(ctx context.Context, p Policy) {
	for _, kv := range p.Variables {
		name, value := kv[0], kv[1]
		v, resp, err := pv.c.Actions.GetRepoVariable(ctx, pv.owner, pv.repo, name)
		s := Step{What: "variable " + name, To: value, Action: "ok"}
		switch {
		case err == nil:
			s.From = v.Value
			if v.Value != value {
				// A variable is the owner's switch (AUTONOMY_PAUSED=true pauses the fleet).
				s.Action, s.Note = "left", "set by the repository's owner"
			}
		case resp != nil && resp.StatusCode == http.StatusNotFound:
			s.From, s.Action = "unset", "create"
		default:
			pv.errs = append(pv.errs, fmt.Errorf("reading variable %s: %w", name, err))
			continue
		}
		pv.step(s, func() error {
			_, err := pv.c.Actions.CreateRepoVariable(ctx, pv.owner, pv.repo, &github.ActionsVariable{Name: name, Value: value})
			return err
		})
	}
}
