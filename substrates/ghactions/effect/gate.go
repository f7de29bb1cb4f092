package effect

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v62/github"
)

// The approval gate of a compiled workflow playbook fails closed. Its job is gated by a GitHub
// environment, and GitHub creates a job's missing environment on the fly with no protection
// rules: pushed before `autonomy provision` ran, the job would run with nobody approving. So the
// job's first step after installing autonomy (`autonomy gh gate`) proves the approval from
// GitHub's own records before any playbook step runs: the environment has required reviewers,
// and this run's review history holds an approval of that environment.

// Gate checks that environment, which gates the running job, has required reviewers and that
// run e.RunID was approved for it. A missing proof is a *Refused naming the fix; an API failure
// is an error.
func Gate(ctx context.Context, e *Env, environment string) error {
	if !validEnvironmentName(environment) {
		return fmt.Errorf("the environment name %q is not one autonomy compiles (letters, digits, '-', '_', '.'): recompile the workflow", environment)
	}
	if e.RunID == "" {
		return fmt.Errorf("GITHUB_RUN_ID is not set: the gate checks the approvals of the running workflow run")
	}
	provision := "run `autonomy provision PROFILE --repo " + e.Owner + "/" + e.Repo + "` (it makes the maintainers the environment's required reviewers), then re-run this workflow and approve the deployment"
	env, resp, err := e.Client.Repositories.GetEnvironment(ctx, e.Owner, e.Repo, url.PathEscape(environment))
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return &Refused{Reason: fmt.Sprintf("environment %s does not exist, so nobody approved this job: %s", environment, provision)}
	}
	if err != nil {
		return fmt.Errorf("reading environment %s: %w%s", environment, err, permissionHint(resp))
	}
	if reviewers := requiredReviewers(env); reviewers == 0 {
		return &Refused{Reason: fmt.Sprintf("environment %s has no required reviewers, so nobody approved this job (GitHub creates a job's missing environment unprotected): %s", environment, provision)}
	}
	approvals, resp, err := e.approvals(ctx)
	if err != nil {
		return fmt.Errorf("reading the review history of run %s: %w%s", e.RunID, err, permissionHint(resp))
	}
	var seen []string
	for _, a := range approvals {
		for _, ae := range a.Environments {
			if !strings.EqualFold(ae.Name, environment) {
				continue
			}
			if a.State == "approved" {
				fmt.Fprintf(e.Out, "approval gate: environment %s of run %s approved by %s\n", environment, e.RunID, a.User.Login)
				return nil
			}
			seen = append(seen, a.State)
		}
	}
	history := "it has no review of this environment"
	if len(seen) > 0 {
		history = "its reviews of this environment are " + strings.Join(seen, ", ")
	}
	return &Refused{Reason: fmt.Sprintf("environment %s has required reviewers, but run %s holds no approval of it (%s): the job was not held for review (the protection was added after the run reached it, or was bypassed); re-run this workflow and approve the deployment", environment, e.RunID, history)}
}

// approval is one entry of a run's review history (GET .../actions/runs/{run_id}/approvals,
// "Get the review history for a workflow run"), which go-github does not wrap.
type approval struct {
	State        string `json:"state"`
	Environments []struct {
		Name string `json:"name"`
	} `json:"environments"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
}

func (e *Env) approvals(ctx context.Context) ([]approval, *github.Response, error) {
	req, err := e.Client.NewRequest(http.MethodGet, "repos/"+e.Owner+"/"+e.Repo+"/actions/runs/"+url.PathEscape(e.RunID)+"/approvals", nil)
	if err != nil {
		return nil, nil, err
	}
	var out []approval
	resp, err := e.Client.Do(ctx, req, &out)
	return out, resp, err
}

// requiredReviewers counts the reviewers of env's required_reviewers rules.
func requiredReviewers(env *github.Environment) int {
	n := 0
	for _, r := range env.ProtectionRules {
		if r.GetType() == "required_reviewers" {
			n += len(r.Reviewers)
		}
	}
	return n
}

// permissionHint says what a 403 or 404 from the gate's reads most likely means.
func permissionHint(resp *github.Response) string {
	var code int
	if resp != nil {
		code = resp.StatusCode
	}
	if code == http.StatusForbidden || code == http.StatusNotFound {
		return " (the job's token needs actions: read, which the compiled approval job grants; was the workflow edited?)"
	}
	return ""
}

// validEnvironmentName reports whether name is safe in a URL path and a log line: the names
// EnvironmentName makes, and a little more.
func validEnvironmentName(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
