package ghfake

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// A workflow run's review history (docs.github.com/rest/actions/workflow-runs, "Get the review
// history for a workflow run"): GET /repos/o/r/actions/runs/{run_id}/approvals lists, oldest
// first, each review a required reviewer gave the run's pending deployments — the environments
// reviewed, approved, rejected or pending (a comment), the reviewer and the comment. Tests record
// the reviews with Review: a person's click is not part of the REST API the jobs call.

const docsApprovals = "https://docs.github.com/rest/actions/workflow-runs#get-the-review-history-for-a-workflow-run"

// reviewStates are the states of GitHub's environment-approvals object.
var reviewStates = []string{"approved", "rejected", "pending"}

// approvalEntry is one review of a run's history as the fake keeps it.
type approvalEntry struct {
	state, login, comment string
	environments          []map[string]any
}

// Review records login's review of run id's deployments to environments (which must exist):
// state is approved, rejected or pending.
func (s *Server) Review(id int64, login, state, comment string, environments ...string) error {
	if !slices.Contains(reviewStates, state) {
		return fmt.Errorf("ghfake: review state %q: use one of %s", state, strings.Join(reviewStates, ", "))
	}
	if len(environments) == 0 {
		return fmt.Errorf("ghfake: a review names the environments it reviews")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		return fmt.Errorf("ghfake: no run %d", id)
	}
	a := approvalEntry{state: state, login: login, comment: comment}
	for _, name := range environments {
		e, ok := s.environments[strings.ToLower(name)]
		if !ok {
			return fmt.Errorf("ghfake: no environment %q to review (SetEnvironment creates one)", name)
		}
		full := s.environmentJSON(e)
		short := map[string]any{}
		for _, k := range []string{"id", "node_id", "name", "url", "html_url", "created_at", "updated_at"} {
			short[k] = full[k]
		}
		a.environments = append(a.environments, short)
	}
	r.approvals = append(r.approvals, a)
	return nil
}

// getApprovals serves GET .../actions/runs/{run_id}/approvals.
func (s *Server) getApprovals(w http.ResponseWriter, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.visibleRun(id)
	if r == nil {
		writeError(w, http.StatusNotFound, "Not Found", docsApprovals)
		return
	}
	out := []any{}
	for _, a := range r.approvals {
		out = append(out, map[string]any{"environments": a.environments, "state": a.state, "user": user(a.login), "comment": a.comment})
	}
	writeJSON(w, http.StatusOK, out)
}
