package ghfake

import (
	"cmp"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Documentation URLs GitHub puts in error bodies, by endpoint.
const (
	docsRoot     = "https://docs.github.com/rest"
	docsRepo     = "https://docs.github.com/rest/repos/repos#get-a-repository"
	docsDispatch = "https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event"
	docsList     = "https://docs.github.com/rest/actions/workflow-runs#list-workflow-runs-for-a-repository"
	docsGet      = "https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run"
	docsCancel   = "https://docs.github.com/rest/actions/workflow-runs#cancel-a-workflow-run"
	// go-github recognizes a secondary limit by this suffix of the documentation URL.
	docsPrimary   = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-the-primary-rate-limit"
	docsSecondary = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
)

// The hourly quota the rate-limit headers report.
const quota = 5000

// recorder remembers the status a handler wrote.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: req.Method, Path: req.URL.Path, Query: req.URL.Query(), Status: rec.status})
		s.mu.Unlock()
	}()
	if strings.HasPrefix(req.URL.Path, blobPrefix) {
		s.serveBlob(rec, req) // a signed Location: no token, no rate limit (jobs.go)
		return
	}
	if suffix, ok := s.gitPath(req.URL.Path); ok {
		s.serveGit(rec, req, suffix) // git over HTTP, with its own authentication (githttp.go)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")

	s.mu.Lock()
	now := s.opts.Now()
	s.used++
	used := (s.used-1)%(quota-1) + 1 // never 0 remaining outside an injected limit
	h.Set("X-RateLimit-Limit", strconv.Itoa(quota))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(quota-used))
	h.Set("X-RateLimit-Used", strconv.Itoa(used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(now.Truncate(time.Hour).Add(time.Hour).Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	h.Set("Date", now.UTC().Format(http.TimeFormat)) // GitHub's clock, as every answer of GitHub's says
	if !s.authorized(req) {
		s.mu.Unlock()
		msg := "Bad credentials"
		if req.Header.Get("Authorization") == "" {
			msg = "Requires authentication"
		}
		writeError(rec, http.StatusUnauthorized, msg, docsRoot)
		return
	}
	limited := s.rateLimit(rec, now)
	before := s.before
	s.mu.Unlock()
	if limited {
		return
	}
	if before != nil {
		before(req.Method, req.URL.Path)
	}
	s.route(rec, req)
}

// BeforeEach has fn called with each authorized request's method and path before it is answered
// (nil: none), so that a test can change the world between two calls of the code under test (a
// pull request retargeted while its gate is evaluated). fn must not block on the fake.
func (s *Server) BeforeEach(fn func(method, path string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.before = fn
}

// authorized checks the token; the caller holds mu.
func (s *Server) authorized(req *http.Request) bool {
	tok, ok := token(req)
	return ok && (tok == s.opts.Token || (s.opts.ReadOnlyToken != "" && tok == s.opts.ReadOnlyToken) || s.isJobToken(tok))
}

// isJobToken reports whether tok is the job token (Options.JobToken).
func (s *Server) isJobToken(tok string) bool { return s.opts.JobToken != "" && tok == s.opts.JobToken }

// actorOf is the login a request's token acts as: github-actions[bot] for the job token, else
// Options.Actor.
func (s *Server) actorOf(req *http.Request) string {
	if tok, _ := token(req); s.isJobToken(tok) {
		return BotLogin
	}
	return s.opts.Actor
}

// writerOf is the login a request's writes are recorded under ("" for github-actions[bot]):
// Options.WritesAs for Token, the bot for the job token.
func (s *Server) writerOf(req *http.Request) string {
	if tok, _ := token(req); s.isJobToken(tok) {
		return ""
	}
	return s.opts.WritesAs
}

// token is the request's token: Authorization: Bearer <t> or token <t>.
func token(req *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || (!strings.EqualFold(scheme, "bearer") && !strings.EqualFold(scheme, "token")) {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// readOnly reports whether a request carries the read-only token.
func (s *Server) readOnly(req *http.Request) bool {
	tok, _ := token(req)
	return s.opts.ReadOnlyToken != "" && tok == s.opts.ReadOnlyToken
}

// rateLimit refuses a request while a limit is in force, or trips the next injected one; the
// caller holds mu.
func (s *Server) rateLimit(w http.ResponseWriter, now time.Time) bool {
	if !now.Before(s.limitUntil) {
		if len(s.trips) == 0 {
			return false
		}
		t := s.trips[0]
		s.trips = s.trips[1:]
		s.limitKind = t.kind
		secs := time.Duration(math.Ceil(t.wait.Seconds())) * time.Second
		if secs < time.Second {
			secs = time.Second
		}
		if t.kind == Primary {
			// The reset is a whole second: the limit lifts exactly then.
			s.limitUntil = now.Add(secs).Truncate(time.Second)
			if s.limitUntil.Before(now.Add(t.wait)) {
				s.limitUntil = s.limitUntil.Add(time.Second)
			}
		} else {
			s.limitUntil = now.Add(secs)
		}
	}
	h := w.Header()
	switch s.limitKind {
	case Primary:
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Used", strconv.Itoa(quota))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(s.limitUntil.Unix(), 10))
		writeError(w, http.StatusForbidden, "API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000.", docsPrimary)
	default:
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(s.limitUntil.Sub(now).Seconds()))))
		code := http.StatusForbidden
		if s.limitKind == TooManyRequests {
			code = http.StatusTooManyRequests
		}
		writeError(w, code, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000.", docsSecondary)
	}
	return true
}

// listWorkflowRuns answers GET .../actions/workflows/{id}/runs.
func (s *Server) listWorkflowRuns(w http.ResponseWriter, req *http.Request) {
	file, ok := s.workflowFile(req.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found", docsList)
		return
	}
	s.listRuns(w, req, file)
}

// workflowFile resolves a workflow_id path segment: a file name or a numeric id.
func (s *Server) workflowFile(id string) (string, bool) {
	if _, ok := s.opts.Workflows[id]; ok {
		return id, true
	}
	for f, n := range s.wfID {
		if strconv.FormatInt(n, 10) == id {
			return f, true
		}
	}
	return "", false
}

func (s *Server) getRepo(w http.ResponseWriter) {
	s.mu.Lock()
	out := s.repoJSON()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

type repoJSON struct {
	ID            int64     `json:"id"`
	Name          string    `json:"name"`
	FullName      string    `json:"full_name"`
	Owner         ownerJSON `json:"owner"`
	Private       bool      `json:"private"`
	HTMLURL       string    `json:"html_url"`
	DefaultBranch string    `json:"default_branch"`
	// Fork is whether the repository is a fork (forks.go).
	Fork bool `json:"fork"`
	// Settings (settings.go).
	AllowAutoMerge      bool `json:"allow_auto_merge"`
	DeleteBranchOnMerge bool `json:"delete_branch_on_merge"`
}

type ownerJSON struct {
	Login string `json:"login"`
	ID    int64  `json:"id"`
	Type  string `json:"type"`
}

func (s *Server) repoJSON() repoJSON {
	full := s.opts.Owner + "/" + s.opts.Repo
	return repoJSON{ID: 700_000_001, Name: s.opts.Repo, FullName: full, Owner: ownerJSON{Login: s.opts.Owner, ID: 9_001, Type: "Organization"},
		Private: true, HTMLURL: "https://github.com/" + full, DefaultBranch: s.opts.DefaultBranch,
		AllowAutoMerge: s.settings.AllowAutoMerge, DeleteBranchOnMerge: s.settings.DeleteBranchOnMerge}
}

// dispatch answers POST .../actions/workflows/{workflow_id}/dispatches.
func (s *Server) dispatch(w http.ResponseWriter, req *http.Request, id string) {
	var body struct {
		Ref              *string                    `json:"ref"`
		Inputs           map[string]json.RawMessage `json:"inputs"`
		ReturnRunDetails bool                       `json:"return_run_details"`
	}
	data, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil || json.Unmarshal(data, &body) != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON", docsDispatch)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	file, ok := s.workflowFile(id)
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found", docsDispatch)
		return
	}
	if s.readOnly(req) {
		writeError(w, http.StatusForbidden, "Resource not accessible by personal access token", docsDispatch)
		return
	}
	wf := s.opts.Workflows[file]
	if !wf.Dispatch {
		writeError(w, http.StatusUnprocessableEntity, "Workflow does not have 'workflow_dispatch' trigger", docsDispatch)
		return
	}
	if body.Ref == nil || *body.Ref == "" {
		writeError(w, http.StatusUnprocessableEntity, "Invalid request.\n\n\"ref\" wasn't supplied.", docsDispatch)
		return
	}
	branch := strings.TrimPrefix(*body.Ref, "refs/heads/")
	if branch != s.opts.DefaultBranch && !slices.Contains(s.opts.Branches, branch) && s.sha(branch) == "" {
		writeError(w, http.StatusUnprocessableEntity, "No ref found for: "+*body.Ref, docsDispatch)
		return
	}
	if n := len(body.Inputs); n > s.opts.MaxInputs {
		writeError(w, http.StatusUnprocessableEntity, fmt.Sprintf("Invalid request.\n\nFor 'properties/inputs', %d properties is more than the maximum of %d.", n, s.opts.MaxInputs), docsDispatch)
		return
	}
	inputs := make(map[string]string, len(body.Inputs))
	var unexpected []string
	for k, raw := range body.Inputs {
		if !slices.Contains(wf.Inputs, k) {
			unexpected = append(unexpected, strconv.Quote(k))
			continue
		}
		var v string
		if json.Unmarshal(raw, &v) != nil {
			writeError(w, http.StatusUnprocessableEntity, fmt.Sprintf("Invalid request.\n\nFor 'properties/%s', %s is not a string.", k, raw), docsDispatch)
			return
		}
		inputs[k] = v
	}
	if len(unexpected) > 0 {
		slices.Sort(unexpected)
		writeError(w, http.StatusUnprocessableEntity, "Unexpected inputs provided: ["+strings.Join(unexpected, ", ")+"]", docsDispatch)
		return
	}
	s.dispatched(w, s.create(file, wf, "workflow_dispatch", branch, s.actorOf(req), inputs), body.ReturnRunDetails)
}

// listRuns answers GET .../actions/runs and .../actions/workflows/{workflow_id}/runs (file
// set): filtered, newest first, paginated with a Link header.
func (s *Server) listRuns(w http.ResponseWriter, req *http.Request, file string) {
	q := req.URL.Query()
	status := q.Get("status")
	if status != "" && !slices.Contains(statuses, status) && !slices.Contains(conclusions, status) {
		writeError(w, http.StatusUnprocessableEntity, fmt.Sprintf("Invalid request.\n\n%q is not a valid status: use one of %s, %s.", status, strings.Join(statuses, ", "), strings.Join(conclusions, ", ")), docsList)
		return
	}
	created, err := parseCreated(q.Get("created"))
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, "Invalid request.\n\n"+err.Error(), docsList)
		return
	}
	perPage := 30
	if n, err := strconv.Atoi(q.Get("per_page")); err == nil && n > 0 {
		perPage = min(n, 100)
	}
	page := 1
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 0 {
		page = n
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	var match []*run
	for _, r := range s.runs {
		s.advance(r, now)
		switch {
		case !r.Visible,
			file != "" && r.Workflow != file,
			status != "" && r.Status != status && r.Conclusion != status,
			q.Get("event") != "" && r.Event != q.Get("event"),
			q.Get("branch") != "" && r.Branch != q.Get("branch"),
			!created(r.CreatedAt):
			continue
		}
		match = append(match, r)
	}
	s.lists++ // after answering: VisibleAfterLists counts the lists that did not show a run
	slices.SortFunc(match, func(a, b *run) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	last := (len(match) + perPage - 1) / perPage
	if l := linkHeader(req, page, last); l != "" {
		w.Header().Set("Link", l)
	}
	out := struct {
		TotalCount   int       `json:"total_count"`
		WorkflowRuns []runJSON `json:"workflow_runs"`
	}{TotalCount: len(match), WorkflowRuns: []runJSON{}}
	if from := (page - 1) * perPage; from < len(match) {
		for _, r := range match[from:min(from+perPage, len(match))] {
			out.WorkflowRuns = append(out.WorkflowRuns, s.runJSON(r))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// linkHeader is GitHub's pagination header: prev, next, last, first, each present only when
// it applies, with the request's query kept.
func linkHeader(req *http.Request, page, last int) string {
	if last <= 1 && page <= 1 {
		return ""
	}
	link := func(p int, rel string) string {
		q := req.URL.Query()
		q.Set("page", strconv.Itoa(p))
		u := url.URL{Scheme: "http", Host: req.Host, Path: req.URL.Path, RawQuery: q.Encode()}
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	var parts []string
	if page > 1 {
		parts = append(parts, link(min(page-1, max(last, 1)), "prev"))
	}
	if page < last {
		parts = append(parts, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		parts = append(parts, link(1, "first"))
	}
	return strings.Join(parts, ", ")
}

// parseCreated reads the created filter: a date or date-time, optionally after >=, >, <=, <,
// or a range a..b (either side may be *).
func parseCreated(v string) (func(time.Time) bool, error) {
	if v == "" {
		return func(time.Time) bool { return true }, nil
	}
	bad := fmt.Errorf("%q is not a valid created filter: use a date or date-time (ISO 8601), optionally after >=, >, <=, < or as a range a..b", v)
	if a, b, ok := strings.Cut(v, ".."); ok {
		lo, hi := time.Time{}, time.Time{}
		var err error
		if a != "*" {
			if lo, _, err = parseWhen(a); err != nil {
				return nil, bad
			}
		}
		if b != "*" {
			var day bool
			if hi, day, err = parseWhen(b); err != nil {
				return nil, bad
			}
			if day {
				hi = hi.Add(24*time.Hour - time.Nanosecond)
			}
		}
		return func(t time.Time) bool { return (lo.IsZero() || !t.Before(lo)) && (hi.IsZero() || !t.After(hi)) }, nil
	}
	for _, op := range []string{">=", "<=", ">", "<"} {
		rest, ok := strings.CutPrefix(v, op)
		if !ok {
			continue
		}
		at, day, err := parseWhen(rest)
		if err != nil {
			return nil, bad
		}
		end := at
		if day {
			end = at.Add(24*time.Hour - time.Nanosecond)
		}
		switch op {
		case ">=":
			return func(t time.Time) bool { return !t.Before(at) }, nil
		case ">":
			return func(t time.Time) bool { return t.After(end) }, nil
		case "<=":
			return func(t time.Time) bool { return !t.After(end) }, nil
		default:
			return func(t time.Time) bool { return t.Before(at) }, nil
		}
	}
	at, day, err := parseWhen(v)
	if err != nil {
		return nil, bad
	}
	if day {
		return func(t time.Time) bool { return !t.Before(at) && t.Before(at.Add(24*time.Hour)) }, nil
	}
	return func(t time.Time) bool { return t.Equal(at) }, nil
}

// parseWhen reads a date (day true) or an RFC 3339 date-time.
func parseWhen(v string) (time.Time, bool, error) {
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, true, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	return t, false, err
}

func (s *Server) getRun(w http.ResponseWriter, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.visibleRun(id)
	if r == nil {
		writeError(w, http.StatusNotFound, "Not Found", docsGet)
		return
	}
	writeJSON(w, http.StatusOK, s.runJSON(r))
}

func (s *Server) cancel(w http.ResponseWriter, req *http.Request, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.visibleRun(id)
	if r == nil {
		writeError(w, http.StatusNotFound, "Not Found", docsCancel)
		return
	}
	if s.readOnly(req) {
		writeError(w, http.StatusForbidden, "Resource not accessible by personal access token", docsCancel)
		return
	}
	if r.Status == "completed" {
		writeError(w, http.StatusConflict, "Cannot cancel a workflow run that is completed.", docsCancel)
		return
	}
	now := s.opts.Now()
	if !r.CancelRequested {
		r.CancelRequested = true
		r.cancelAt = now.Add(s.opts.CancelDelay)
		s.advance(r, now)
	}
	writeJSON(w, http.StatusAccepted, struct{}{})
}

// visibleRun finds a run by its id path segment, if it exists yet; the caller holds mu.
func (s *Server) visibleRun(id string) *run {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil
	}
	r, ok := s.runs[n]
	if !ok {
		return nil
	}
	s.advance(r, s.opts.Now())
	if !r.Visible {
		return nil
	}
	return r
}

// runJSON is a workflow run in GitHub's shape (the fields a client reads).
type runJSON struct {
	ID           int64    `json:"id"`
	Name         string   `json:"name"`
	NodeID       string   `json:"node_id"`
	HeadBranch   string   `json:"head_branch"`
	HeadSHA      string   `json:"head_sha"`
	Path         string   `json:"path"`
	DisplayTitle string   `json:"display_title"`
	RunNumber    int      `json:"run_number"`
	Event        string   `json:"event"`
	Status       string   `json:"status"`
	Conclusion   *string  `json:"conclusion"`
	WorkflowID   int64    `json:"workflow_id"`
	URL          string   `json:"url"`
	HTMLURL      string   `json:"html_url"`
	CreatedAt    string   `json:"created_at"`
	UpdatedAt    string   `json:"updated_at"`
	RunAttempt   int      `json:"run_attempt"`
	RunStartedAt string   `json:"run_started_at"`
	JobsURL      string   `json:"jobs_url"`
	LogsURL      string   `json:"logs_url"`
	CancelURL    string   `json:"cancel_url"`
	RerunURL     string   `json:"rerun_url"`
	WorkflowURL  string   `json:"workflow_url"`
	Repository   repoJSON `json:"repository"`
	// Actor is the user who dispatched the run; TriggeringActor who started this attempt.
	Actor           userJSON `json:"actor"`
	TriggeringActor userJSON `json:"triggering_actor"`
	// HeadRepository is where the run's workflow and code came from (a fork's, for a pull
	// request from one; the fake's runs are all the repository's own).
	HeadRepository repoJSON `json:"head_repository"`
}

func (s *Server) runJSON(r *run) runJSON {
	api := strings.TrimSuffix(s.URL, "/") + "/repos/" + s.opts.Owner + "/" + s.opts.Repo
	self := api + "/actions/runs/" + strconv.FormatInt(r.ID, 10)
	sha := sha1.Sum([]byte(r.Branch))
	var conclusion *string
	if r.Status == "completed" {
		c := r.Conclusion
		conclusion = &c
	}
	return runJSON{
		ID: r.ID, Name: r.Name, NodeID: fmt.Sprintf("WFR_%x", r.ID), HeadBranch: r.Branch, HeadSHA: hex.EncodeToString(sha[:]),
		Path: ".github/workflows/" + r.Workflow, DisplayTitle: r.DisplayTitle, RunNumber: r.RunNumber, Event: r.Event,
		Status: r.Status, Conclusion: conclusion, WorkflowID: r.WorkflowID, URL: self,
		HTMLURL:   "https://github.com/" + s.opts.Owner + "/" + s.opts.Repo + "/actions/runs/" + strconv.FormatInt(r.ID, 10),
		CreatedAt: r.CreatedAt.Format(time.RFC3339), UpdatedAt: r.UpdatedAt.Format(time.RFC3339), RunAttempt: 1,
		RunStartedAt: r.CreatedAt.Format(time.RFC3339), JobsURL: self + "/jobs", LogsURL: self + "/logs",
		CancelURL: self + "/cancel", RerunURL: self + "/rerun", WorkflowURL: api + "/actions/workflows/" + strconv.FormatInt(r.WorkflowID, 10),
		Repository: s.repoJSON(), HeadRepository: s.repoJSON(), Actor: userJSON{r.Actor}, TriggeringActor: userJSON{r.Actor},
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		code, data = http.StatusInternalServerError, []byte(`{"message":"ghfake: `+err.Error()+`"}`)
	}
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

// writeError writes GitHub's error body.
func writeError(w http.ResponseWriter, code int, msg, docs string) {
	writeJSON(w, code, map[string]string{"message": msg, "documentation_url": docs, "status": strconv.Itoa(code)})
}
