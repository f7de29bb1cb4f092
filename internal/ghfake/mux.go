package ghfake

import (
	"net/http"
	"path"
	"strings"
)

// The fake's routes are Go 1.22 ServeMux patterns. route hands the mux the request's decoded
// path without its leading and trailing slashes, so that a %2F in a segment splits it as the
// slash it decodes to, a trailing slash is ignored, and the mux never answers with a redirect;
// a path it does not know (or knows for other methods only) is the catch-all's 404 Not Found
// with GitHub's error body, never the mux's 404 or 405.

// routes registers every endpoint. The order is free: the most specific pattern wins.
func (s *Server) routes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/", s.notFound)
	m.HandleFunc("POST /graphql", s.graphql)
	// The authenticated user: the login the tokens act as (Options.Actor). An installation
	// token (the job token) is no user: GitHub answers it 403.
	m.HandleFunc("GET /user", func(w http.ResponseWriter, req *http.Request) {
		if tok, _ := token(req); s.isJobToken(tok) {
			writeError(w, http.StatusForbidden, "Resource not accessible by integration", docsRoot)
			return
		}
		writeJSON(w, http.StatusOK, user(s.opts.Actor))
	})
	m.HandleFunc("GET /users/{login}", func(w http.ResponseWriter, req *http.Request) { s.getUser(w, req.PathValue("login")) })
	s.repoRoute(m, "GET ", func(w http.ResponseWriter, _ *http.Request) { s.getRepo(w) })
	// The Actions endpoints the runner uses (handlers.go, approvals.go, artifacts.go) refuse
	// the read-only token themselves, with their own message.
	s.repoRoute(m, "POST /actions/workflows/{id}/dispatches", func(w http.ResponseWriter, req *http.Request) { s.dispatch(w, req, req.PathValue("id")) })
	s.repoRoute(m, "GET /actions/workflows/{id}/runs", s.listWorkflowRuns)
	s.repoRoute(m, "GET /actions/runs", func(w http.ResponseWriter, req *http.Request) { s.listRuns(w, req, "") })
	s.repoRoute(m, "GET /actions/runs/{id}", func(w http.ResponseWriter, req *http.Request) { s.getRun(w, req.PathValue("id")) })
	s.repoRoute(m, "POST /actions/runs/{id}/cancel", func(w http.ResponseWriter, req *http.Request) { s.cancel(w, req, req.PathValue("id")) })
	s.repoRoute(m, "GET /actions/runs/{id}/approvals", func(w http.ResponseWriter, req *http.Request) { s.getApprovals(w, req.PathValue("id")) })
	s.repoRoute(m, "GET /actions/runs/{id}/artifacts", s.listArtifacts)
	s.repoRoute(m, "GET /actions/runs/{id}/jobs", s.listJobs) // jobs.go
	s.repoRoute(m, "GET /actions/jobs/{id}/logs", s.jobLogs)
	s.repoRoute(m, "DELETE /actions/artifacts/{id}", s.deleteArtifact)
	// The code host (pulls.go, reviews.go).
	s.codeRoute(m, "GET /pulls", s.listPulls)
	s.codeRoute(m, "POST /pulls", s.createPull)
	s.codeRoute(m, "GET /pulls/{n}", s.getPull)
	s.codeRoute(m, "PATCH /pulls/{n}", s.updatePull)
	s.codeRoute(m, "GET /pulls/{n}/reviews", s.listReviews)
	s.codeRoute(m, "POST /pulls/{n}/reviews", s.createReview)
	s.codeRoute(m, "GET /pulls/{n}/files", s.listPullFiles)
	s.codeRoute(m, "GET /issues/comments", s.listRepoComments)  // repocomments.go
	s.codeRoute(m, "GET /issues/events", s.listRepoIssueEvents) // issueevents.go
	s.codeRoute(m, "GET /issues/{a}/{b}", s.issueChild)         // a comment by id, an issue's comments or timeline
	s.codeRoute(m, "POST /issues/{n}/comments", s.createComment)
	s.codeRoute(m, "POST /issues/{n}/labels", s.addLabels)
	s.codeRoute(m, "DELETE /issues/{n}/labels/{name}", s.removeLabel) // issues.go
	s.codeRoute(m, "POST /issues", s.createIssue)
	s.codeRoute(m, "GET /issues/{n}", s.getIssue)
	s.codeRoute(m, "POST /statuses/{sha}", s.createStatus)
	s.codeRoute(m, "GET /commits/{ref}/status", s.combinedStatus)
	s.codeRoute(m, "GET /commits/{ref}/statuses", s.listStatuses)
	s.codeRoute(m, "GET /compare/{basehead}", s.compare)
	// Settings (settings.go). A branch is one segment: the path is split after decoding (see
	// above), so a branch with a slash is not served, as before the mux.
	s.codeRoute(m, "PATCH ", s.updateRepo)
	s.codeRoute(m, "PUT /actions/permissions/workflow", s.putWorkflowPermissions)
	s.codeRoute(m, "/actions/permissions/workflow", s.getWorkflowPermissions) // any other method reads them
	s.codeRoute(m, "PUT /branches/{branch}/protection", s.putProtection)
	s.codeRoute(m, "GET /branches/{branch}/protection", s.getProtection)
	s.codeRoute(m, "GET /labels/{name}", s.getLabel)
	s.codeRoute(m, "POST /labels", s.createLabel)
	s.codeRoute(m, "GET /actions/variables/{name}", s.getVariable)
	s.codeRoute(m, "POST /actions/variables", s.createVariable)
	s.gitRoutes(m) // gitdata.go
	// People (people.go), deployment environments (environments.go) and the control
	// endpoints (control.go).
	s.codeRoute(m, "GET /collaborators", s.listCollaborators)
	s.codeRoute(m, "GET /collaborators/{login}/permission", s.getPermission)
	s.codeRoute(m, "GET /environments", s.listEnvironments)
	s.codeRoute(m, "GET /environments/{name}", s.getEnvironment)
	s.codeRoute(m, "PUT /environments/{name}", s.putEnvironmentRequest)
	s.codeRoute(m, "GET /issues", s.listIssues)
	s.codeRoute(m, "POST /issues/comments/{id}/reactions", s.addReaction)
	s.codeRoute(m, "POST /issues/{n}/assignees", s.addAssignees)
	s.codeRoute(m, "POST /pulls/{n}/requested_reviewers", s.requestReviewers)
	s.codeRoute(m, "POST /actions/runs/{id}/rerun", s.rerun)
	return m
}

// repoRoute registers "[METHOD ]/rest" under /repos/{owner}/{repo}: h answers only for the
// fake's repository (case-insensitively, as GitHub matches names), 404 for any other.
func (s *Server) repoRoute(m *http.ServeMux, pattern string, h http.HandlerFunc) {
	method, rest, ok := strings.Cut(pattern, " ")
	if !ok { // no method: any
		method, rest = "", pattern
	}
	m.HandleFunc(strings.TrimSpace(method+" /repos/{owner}/{repo}"+rest), func(w http.ResponseWriter, req *http.Request) {
		if !s.ours(req.PathValue("owner"), req.PathValue("repo")) {
			writeError(w, http.StatusNotFound, "Not Found", docsRoot)
			return
		}
		h(w, req)
	})
}

// codeRoute is repoRoute for the code-host endpoints: a write (any method but GET) by the
// read-only token is refused with 403 before h runs.
func (s *Server) codeRoute(m *http.ServeMux, pattern string, h http.HandlerFunc) {
	s.repoRoute(m, pattern, func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && s.readOnly(req) {
			writeError(w, http.StatusForbidden, "Resource not accessible by integration", docsRoot)
			return
		}
		h(w, req)
	})
}

// ours reports whether owner/repo name the fake's repository.
func (s *Server) ours(owner, repo string) bool {
	return strings.EqualFold(owner, s.opts.Owner) && strings.EqualFold(repo, s.opts.Repo)
}

// route dispatches an authenticated request to its endpoint through the mux (see above).
func (s *Server) route(w http.ResponseWriter, req *http.Request) {
	p := "/" + strings.Trim(req.URL.Path, "/")
	if path.Clean(p) != p || req.Method == http.MethodHead || (p == "/graphql" && req.URL.Path != p) {
		// An empty, . or .. segment, which the mux would redirect; HEAD, which it would
		// answer as GET; /graphql/, since only /graphql itself is served.
		s.notFound(w, req)
		return
	}
	u := *req.URL
	u.Path, u.RawPath = p, ""
	r := req.WithContext(req.Context())
	r.URL = &u
	s.mux.ServeHTTP(w, r)
}

// notFound answers a path no route serves: 404 Not Found, but 403 for a write by the
// read-only token to the repository, which is refused before its path is looked at.
func (s *Server) notFound(w http.ResponseWriter, req *http.Request) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if len(parts) >= 3 && parts[0] == "repos" && s.ours(parts[1], parts[2]) && req.Method != http.MethodGet && s.readOnly(req) {
		writeError(w, http.StatusForbidden, "Resource not accessible by integration", docsRoot)
		return
	}
	writeError(w, http.StatusNotFound, "Not Found", docsRoot)
}
