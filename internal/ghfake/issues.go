package ghfake

import (
	"net/http"
	"slices"
	"strconv"
)

const (
	docsCreateIssue = "https://docs.github.com/rest/issues/issues#create-an-issue"
	docsGetIssue    = "https://docs.github.com/rest/issues/issues#get-an-issue"
	docsRemoveLabel = "https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue"
)

// createIssue serves POST …/issues: title is required; body and labels are optional. GitHub
// answers 201 with the issue (pull requests are made by POST …/pulls).
func (s *Server) createIssue(w http.ResponseWriter, req *http.Request) {
	var body struct {
		Title  *string  `json:"title"`
		Body   string   `json:"body"`
		Labels []string `json:"labels"`
	}
	if !readBody(w, req, &body, docsCreateIssue) {
		return
	}
	if body.Title == nil || *body.Title == "" {
		validation(w, "Issue", "title", "missing_field", "", docsCreateIssue)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	is := &Issue{Title: *body.Title, Body: body.Body, State: "open"}
	n := s.newIssue(is)
	if by := s.writerOf(req); by != "" {
		if s.issueBy == nil {
			s.issueBy = map[int]string{}
		}
		s.issueBy[n] = by
	}
	// The labels given are added as labeling does: each records its labeled event.
	for _, l := range body.Labels {
		if !slices.Contains(is.Labels, l) {
			is.Labels = append(is.Labels, l)
			s.recordIssueEvent(n, "labeled", s.writerOf(req), l)
		}
	}
	writeJSON(w, http.StatusCreated, s.issueJSON(is, "issues"))
}

// getIssue serves GET …/issues/{n}: an issue, or a pull request seen as an issue.
func (s *Server) getIssue(w http.ResponseWriter, req *http.Request) {
	n, _ := strconv.Atoi(req.PathValue("n"))
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[n]
	if is == nil {
		writeError(w, http.StatusNotFound, "Not Found", docsGetIssue)
		return
	}
	kind := "issues"
	if is.PR {
		kind = "pull"
	}
	writeJSON(w, http.StatusOK, s.issueJSON(is, kind))
}

// removeLabel serves DELETE …/issues/{n}/labels/{name}: 200 with the labels left, or 404
// "Label does not exist" when the issue does not carry it.
func (s *Server) removeLabel(w http.ResponseWriter, req *http.Request) {
	n, _ := strconv.Atoi(req.PathValue("n"))
	name := req.PathValue("name")
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[n]
	if is == nil {
		writeError(w, http.StatusNotFound, "Not Found", docsRemoveLabel)
		return
	}
	i := slices.Index(is.Labels, name)
	if i < 0 {
		writeError(w, http.StatusNotFound, "Label does not exist", docsRemoveLabel)
		return
	}
	is.Labels = slices.Delete(is.Labels, i, i+1)
	s.recordIssueEvent(n, "unlabeled", s.writerOf(req), name)
	out := []labelJSON{}
	for _, l := range is.Labels {
		out = append(out, labelJSON{l})
	}
	writeJSON(w, http.StatusOK, out)
}
