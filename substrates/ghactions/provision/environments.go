package provision

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/substrates/ghactions/maintainers"
)

// MaxReviewers is the most required reviewers GitHub lets an environment have.
const MaxReviewers = 6

// environments creates each environment gating an approval step of a compiled workflow
// playbook, its required reviewers the maintainers (policy.box.human.maintainers_var, falling
// back to the admins). An environment that already requires reviewers is left as it is (its
// reviewers, wait timer and branch policy are the owner's); one that requires none gets the
// maintainers, keeping its wait timer and branch policy.
func (pv *provisioner) environments(ctx context.Context, p Policy) {
	names := slices.Clone(p.Environments)
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return
	}
	list, err := maintainers.Resolve(ctx, pv.c, pv.owner, pv.repo, p.MaintainersVar)
	if err != nil {
		pv.errs = append(pv.errs, fmt.Errorf("the environments' reviewers: %w", err))
		return
	}
	logins := list.Logins
	capped := ""
	if len(logins) > MaxReviewers {
		capped = fmt.Sprintf("; GitHub allows %d reviewers: %s not added", MaxReviewers, strings.Join(logins[MaxReviewers:], ", "))
		logins = logins[:MaxReviewers]
	}
	var ids []int64
	for _, l := range logins {
		u, _, err := pv.c.Users.Get(ctx, l)
		if err != nil {
			pv.errs = append(pv.errs, fmt.Errorf("the environments' reviewer %s: %w", l, err))
			return
		}
		ids = append(ids, u.GetID())
	}
	want := "required reviewers " + strings.Join(logins, ", ") + " (" + string(list.Source) + ")"
	for _, name := range names {
		cur, resp, err := pv.c.Repositories.GetEnvironment(ctx, pv.owner, pv.repo, name)
		s := Step{What: "environment " + name, To: want, Action: "ok"}
		req := &github.CreateUpdateEnvironment{WaitTimer: github.Int(0)}
		switch {
		case err == nil:
			have, wait, branch, self := envRules(cur)
			s.From = describeEnv(have, wait, branch)
			switch {
			case len(have) > 0 && sameIDs(have, ids):
				s.Note = keptNote(wait, branch)
			case len(have) > 0:
				s.Action, s.Note = "left", "it requires its own reviewers; kept as the owner set it"
			default:
				s.Action, s.Note = "update", keptNote(wait, branch)
				req.WaitTimer, req.DeploymentBranchPolicy, req.PreventSelfReview = github.Int(wait), cur.DeploymentBranchPolicy, github.Bool(self)
			}
		case resp != nil && resp.StatusCode == http.StatusNotFound:
			s.From, s.Action = "missing", "create"
		default:
			pv.errs = append(pv.errs, fmt.Errorf("reading environment %s: %w", name, err))
			continue
		}
		if s.Action != "ok" && s.Action != "left" && capped != "" {
			s.Note = strings.TrimPrefix(s.Note+capped, "; ")
		}
		for _, id := range ids {
			req.Reviewers = append(req.Reviewers, &github.EnvReviewers{Type: github.String("User"), ID: github.Int64(id)})
		}
		pv.step(s, func() error {
			if _, _, err := pv.c.Repositories.CreateUpdateEnvironment(ctx, pv.owner, pv.repo, name, req); err != nil {
				return err
			}
			// A plan that does not support required reviewers must not leave an ungated
			// environment behind unreported: read it back.
			got, _, err := pv.c.Repositories.GetEnvironment(ctx, pv.owner, pv.repo, name)
			if err != nil {
				return err
			}
			if have, _, _, _ := envRules(got); !sameIDs(have, ids) {
				return fmt.Errorf("GitHub kept reviewers %v, not %v: does the repository's plan support required reviewers?", have, ids)
			}
			return nil
		})
	}
}

// envRules reads an environment's required reviewers (user and team ids), wait timer, branch
// policy and prevent-self-review.
func envRules(e *github.Environment) (ids []int64, wait int, branch bool, self bool) {
	for _, r := range e.ProtectionRules {
		switch r.GetType() {
		case "wait_timer":
			wait = r.GetWaitTimer()
		case "branch_policy":
			branch = true
		case "required_reviewers":
			self = r.GetPreventSelfReview()
			for _, rv := range r.Reviewers {
				switch u := rv.Reviewer.(type) {
				case *github.User:
					ids = append(ids, u.GetID())
				case *github.Team:
					ids = append(ids, -u.GetID()) // never equal to a user's
				}
			}
		}
	}
	return ids, wait, branch || e.DeploymentBranchPolicy != nil, self
}

func sameIDs(a, b []int64) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func describeEnv(ids []int64, wait int, branch bool) string {
	d := "no required reviewers"
	if len(ids) > 0 {
		d = strconv.Itoa(len(ids)) + " required reviewers"
	}
	return d + keptSuffix(wait, branch)
}

func keptSuffix(wait int, branch bool) string {
	s := ""
	if wait > 0 {
		s += fmt.Sprintf(", wait timer %d min", wait)
	}
	if branch {
		s += ", branch policy"
	}
	return s
}

func keptNote(wait int, branch bool) string {
	if s := keptSuffix(wait, branch); s != "" {
		return "kept: " + strings.TrimPrefix(s, ", ")
	}
	return ""
}
