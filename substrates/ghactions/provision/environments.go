package provision

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/substrates/ghactions/maintainers"
)

// maxReviewers is GitHub's limit on an environment's required reviewers.
const maxReviewers = 6

// environments creates each environment an approval step of a compiled workflow playbook is
// gated by, with the maintainers (policy.box.human.maintainers_var, else the admins) as its
// required reviewers and admins unable to bypass it. An environment that already has required
// reviewers is left as its owner set it (a different set of reviewers is the owner's choice;
// adding ours could only let more people approve); one without reviewers gets ours, keeping its
// wait timer, branch policy, self-review and bypass settings.
func (pv *provisioner) environments(ctx context.Context, p Policy) {
	if len(p.Environments) == 0 {
		return
	}
	var ids []int64
	var logins []string
	var dropped int
	resolved := false
	resolve := func() error {
		if resolved {
			return nil
		}
		resolved = true
		l, err := maintainers.Resolve(ctx, pv.c, pv.owner, pv.repo, p.MaintainersVar)
		if err != nil {
			return fmt.Errorf("resolving the maintainers: %w", err)
		}
		if len(l.Logins) == 0 {
			return fmt.Errorf("no maintainers to review the approval environments: set the repository variable %s (policy.box.human.maintainers_var) to their logins", l.Var)
		}
		for _, login := range l.Logins {
			if len(ids) == maxReviewers {
				dropped = len(l.Logins) - maxReviewers
				break
			}
			u, _, err := pv.c.Users.Get(ctx, login)
			if err != nil {
				return fmt.Errorf("resolving maintainer %s to a user id: %w", login, err)
			}
			ids = append(ids, u.GetID())
			logins = append(logins, u.GetLogin())
		}
		return nil
	}
	for _, name := range p.Environments {
		what := "environment " + name
		cur, resp, err := pv.c.Repositories.GetEnvironment(ctx, pv.owner, pv.repo, name)
		if err != nil && (resp == nil || resp.StatusCode != http.StatusNotFound) {
			pv.errs = append(pv.errs, fmt.Errorf("reading the %s: %w", what, err))
			continue
		}
		var have []string
		req := &github.CreateUpdateEnvironment{CanAdminsBypass: github.Bool(false)}
		s := Step{What: what, From: "missing", Action: "create"}
		if cur != nil {
			var kept []string
			req.WaitTimer = github.Int(0)
			for _, r := range cur.ProtectionRules {
				switch r.GetType() {
				case "required_reviewers":
					for _, rv := range r.Reviewers {
						have = append(have, reviewerName(rv))
					}
					req.PreventSelfReview = r.PreventSelfReview
				case "wait_timer":
					req.WaitTimer = r.WaitTimer
					kept = append(kept, fmt.Sprintf("wait timer %d min", r.GetWaitTimer()))
				}
			}
			if bp := cur.DeploymentBranchPolicy; bp != nil {
				req.DeploymentBranchPolicy = bp
				kept = append(kept, "branch policy")
			}
			req.CanAdminsBypass = cur.CanAdminsBypass
			if cur.CanAdminsBypass == nil {
				req.CanAdminsBypass = github.Bool(true)
			}
			s.From = "no required reviewers"
			if len(have) > 0 {
				s.From = "reviewers " + strings.Join(have, ", ")
			}
			if len(kept) > 0 {
				s.Note = "kept: " + strings.Join(kept, ", ")
			}
		}
		if err := resolve(); err != nil {
			pv.errs = append(pv.errs, fmt.Errorf("%s: %w", what, err))
			continue
		}
		s.To = "reviewers " + strings.Join(logins, ", ")
		if dropped > 0 {
			s.Note = joinNote(fmt.Sprintf("GitHub allows %d reviewers: %d more maintainers not added", maxReviewers, dropped), s.Note)
		}
		if cur != nil {
			switch {
			case len(have) == 0:
				s.Action = "update"
			case sameLogins(have, logins):
				s.Action = "ok"
			default:
				s.Action = "left"
				s.Note = joinNote("required reviewers set by the repository's owner", s.Note)
			}
		}
		for _, id := range ids {
			req.Reviewers = append(req.Reviewers, &github.EnvReviewers{Type: github.String("User"), ID: github.Int64(id)})
		}
		pv.step(s, func() error {
			_, _, err := pv.c.Repositories.CreateUpdateEnvironment(ctx, pv.owner, pv.repo, name, req)
			return err
		})
	}
}

func joinNote(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

// reviewerName is a required reviewer's login (a team's slug).
func reviewerName(r *github.RequiredReviewer) string {
	switch v := r.Reviewer.(type) {
	case *github.User:
		return v.GetLogin()
	case *github.Team:
		return "team " + v.GetSlug()
	}
	return r.GetType()
}

func sameLogins(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y string) bool { return strings.EqualFold(x, y) }) {
			return false
		}
	}
	return true
}
