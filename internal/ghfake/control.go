package ghfake

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The endpoints the control workflow uses (autonomy gh control, autonomy gh sweep, the human
// seam's engage): reactions to a comment, issue assignees, review requests, listing issues by
// label, and re-running a workflow run.

const (
	docsReactions = "https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment"
	docsAssignees = "https://docs.github.com/rest/issues/assignees#add-assignees-to-an-issue"
	docsReviewers = "https://docs.github.com/rest/pulls/review-requests#request-reviewers-for-a-pull-request"
	docsListIssue = "https://docs.github.com/rest/issues/issues#list-repository-issues"
	docsRerun     = "https://docs.github.com/rest/actions/workflow-runs#re-run-a-workflow"
)

// reactionContents are the reactions GitHub accepts.
var reactionContents = []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}

// controlState is what those endpoints record.
type controlState struct {
	reactions map[int64][]string // comment id → contents, in order
	assignees map[int][]string   // issue → logins, in order
	reviewers map[int][]string   // pull request → requested logins
	reruns    map[int64]int      // run id → re-runs asked
}

func (c *controlState) init() {
	if c.reactions == nil {
		c.reactions, c.assignees, c.reviewers, c.reruns = map[int64][]string{}, map[int][]string{}, map[int][]string{}, map[int64]int{}
	}
}

// Reactions returns the reactions left on comment id, in order.
func (s *Server) Reactions(id int64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctl.init()
	return slices.Clone(s.ctl.reactions[id])
}

// Assignees returns the logins assigned to issue n, in the order they were added.
func (s *Server) Assignees(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctl.init()
	return slices.Clone(s.ctl.assignees[n])
}

// RequestedReviewers returns the logins whose review of pull request n was requested.
func (s *Server) RequestedReviewers(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctl.init()
	return slices.Clone(s.ctl.reviewers[n])
}

// Reruns returns how many re-runs of run id were asked.
func (s *Server) Reruns(id int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctl.init()
	return s.ctl.reruns[id]
}

// addReaction serves POST .../issues/comments/{id}/reactions.
func (s *Server) addReaction(w http.ResponseWriter, req *http.Request) {
	id, err := strconv.ParseInt(req.PathValue("id"), 10, 64)
	var body struct{ Content string }
	if !readBody(w, req, &body, docsReactions) {
		return
	}
	if err != nil || id < 1 {
		writeError(w, http.StatusNotFound, "Not Found", docsReactions)
		return
	}
	if !slices.Contains(reactionContents, body.Content) {
		validation(w, "Reaction", "content", "invalid", "content must be one of: "+strings.Join(reactionContents, ", "), docsReactions)
		return
	}
	s.mu.Lock()
	s.ctl.init()
	s.ctl.reactions[id] = append(s.ctl.reactions[id], body.Content)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"id": id, "content": body.Content, "user": userJSON{BotLogin}})
}

// addAssignees serves POST .../issues/{n}/assignees.
func (s *Server) addAssignees(w http.ResponseWriter, req *http.Request) {
	n, _ := strconv.Atoi(req.PathValue("n"))
	var body struct{ Assignees []string }
	if !readBody(w, req, &body, docsAssignees) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctl.init()
	is := s.issues[n]
	if is == nil {
		writeError(w, http.StatusNotFound, "Not Found", docsAssignees)
		return
	}
	// GitHub silently drops a login that cannot be assigned; the fake assigns only the
	// repository's collaborators when it knows them.
	for _, l := range body.Assignees {
		if s.opts.Collaborators != nil && s.opts.Collaborators[l] == "" {
			continue
		}
		if !slices.Contains(s.ctl.assignees[n], l) {
			s.ctl.assignees[n] = append(s.ctl.assignees[n], l)
		}
	}
	out := s.issueJSON(is, "issues")
	writeJSON(w, http.StatusCreated, out)
}

// requestReviewers serves POST .../pulls/{n}/requested_reviewers.
func (s *Server) requestReviewers(w http.ResponseWriter, req *http.Request) {
	n, _ := strconv.Atoi(req.PathValue("n"))
	var body struct{ Reviewers []string }
	if !readBody(w, req, &body, docsReviewers) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctl.init()
	is := s.issues[n]
	if is == nil || !is.PR {
		writeError(w, http.StatusNotFound, "Not Found", docsReviewers)
		return
	}
	for _, l := range body.Reviewers {
		if s.opts.Collaborators != nil && s.opts.Collaborators[l] == "" {
			validation(w, "PullRequest", "reviewers", "invalid", "Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the "+s.opts.Owner+"/"+s.opts.Repo+" repository.", docsReviewers)
			return
		}
	}
	for _, l := range body.Reviewers {
		if !slices.Contains(s.ctl.reviewers[n], l) {
			s.ctl.reviewers[n] = append(s.ctl.reviewers[n], l)
		}
	}
	writeJSON(w, http.StatusCreated, s.issueJSON(is, "pull"))
}

// rerun serves POST .../actions/runs/{id}/rerun.
func (s *Server) rerun(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctl.init()
	r := s.visibleRun(req.PathValue("id"))
	if r == nil {
		writeError(w, http.StatusNotFound, "Not Found", docsRerun)
		return
	}
	if r.Status != "completed" {
		writeError(w, http.StatusForbidden, "This workflow is already running", docsRerun)
		return
	}
	s.ctl.reruns[r.ID]++
	r.Status, r.Conclusion, r.CancelRequested = "queued", "", false
	r.UpdatedAt = s.opts.Now()
	writeJSON(w, http.StatusCreated, map[string]any{})
}
