// Package ghfake is an in-process fake of the part of GitHub's REST API the gh-actions runner
// uses: the repository, workflow dispatch, workflow runs (list, get, cancel), token
// authentication, pagination and rate limits, with GitHub's documented request and response
// shapes and status codes. It enforces exactly the workflow_dispatch inputs each workflow
// declares (WorkflowsFromFiles learns them from compiled workflows), so a dispatch the fake
// accepts is one GitHub would accept.
//
// Runs are created by dispatches (or AddRun) and then driven by the test: Start, Complete,
// SetStatus. Realism knobs make a run appear in lists only some time after its dispatch, a
// cancel take effect only after a delay, and the next requests hit a rate limit. Everything is
// evaluated lazily under one lock: the fake starts no goroutine of its own besides the HTTP
// server.
//
// With Options.GitDir (a bare git repository holding the branches) it is also the code host the
// trusted jobs and autonomy provision use: pull requests, issues, comments, labels, reviews,
// commit statuses, branch protection and Mergeable (pulls.go), repository settings, labels and
// Actions variables (settings.go), the Git Data API (gitdata.go), and GraphQL's
// enablePullRequestAutoMerge (graphql.go). A push to the bare repository is a push to GitHub, and
// the fake serves it over git's smart HTTP at URL/<owner>/<repo>.git as github.com does, with a
// token as Basic's password (githttp.go).
// Deployment environments (environments.go) and a run's review history (approvals.go) back the
// approval gates of compiled workflow playbooks.
package ghfake

import (
	"cmp"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Workflow is one workflow file of the repository, as the fake needs to know it.
type Workflow struct {
	// Name is the workflow's name: key (the file name without extension when empty). GitHub
	// reports it as a run's name.
	Name string
	// Dispatch is whether the workflow has a workflow_dispatch trigger; a dispatch of a
	// workflow without one is refused with 422, as GitHub does.
	Dispatch bool
	// Inputs are the workflow_dispatch inputs the workflow declares; any other input is refused.
	Inputs []string
	// RunName is the run-name template with {0} standing for the AUTONOMY_CORRELATION input:
	// the compiled "<actor> [{0}]". A dispatched run's display_title renders it when the input
	// is set, and is Name otherwise. Empty means the workflow has no run-name: display_title is
	// then Name.
	RunName string
}

// CorrelationInput is the workflow_dispatch input the compiled run-name echoes.
const CorrelationInput = "AUTONOMY_CORRELATION"

// Options configure a Server.
type Options struct {
	// Owner and Repo name the one repository the fake serves ("o" and "r" when empty).
	Owner, Repo string
	// Token is the token every request must carry (Authorization: Bearer|token <Token>).
	Token string
	// Actor is the login the tokens act as: the actor and triggering_actor of the runs they
	// dispatch, as GitHub reports the user who dispatched a run (Owner when empty).
	Actor string
	// WritesAs, when set, is the person Token belongs to (a personal access token, as the local
	// runner's GH_TOKEN is): the comments, issues and labels it writes are theirs, with their
	// author_association, as GitHub records a person's token's writes. Unset, Token writes as
	// github-actions[bot], as a workflow job's token does.
	WritesAs string
	// JobToken, when set, is a workflow job's GITHUB_TOKEN: an installation token of the GitHub
	// Actions app, which acts as github-actions[bot] (BotLogin). It reads and writes as Token
	// does. A workflow_dispatch made with it creates a run (GitHub's docs: events the
	// GITHUB_TOKEN triggers create no run, except workflow_dispatch and repository_dispatch)
	// whose actor and triggering_actor are github-actions[bot], so the run's github.actor,
	// github.triggering_actor and github.event.sender are the bot, not a person. GET /user
	// refuses it (403), as GitHub refuses an installation token.
	JobToken string
	// ReadOnlyToken, when set, is a second valid token that may read but whose writes
	// (dispatch, cancel) are refused with 403, as a token without actions: write is.
	ReadOnlyToken string
	// DefaultBranch is the repository's default branch ("main" when empty); Branches are the
	// other branches a dispatch may name as its ref.
	DefaultBranch string
	Branches      []string
	// Workflows are the repository's workflows by file name ("develop.yml").
	Workflows map[string]Workflow
	// Visibility delays a dispatched run: it exists (in lists and by id) only this long after
	// its dispatch. VisibleAfterLists delays it by list calls instead: it exists once this many
	// list requests were answered after its dispatch. Both may be set; both must then pass.
	Visibility        time.Duration
	VisibleAfterLists int
	// CancelDelay is how long an accepted cancel takes to complete the run (at once when zero);
	// until then GitHub still shows the run in progress.
	CancelDelay time.Duration
	// DispatchNoContent makes a dispatch answer 204 even when asked for the run's details, as
	// GitHub did before February 2026 (and an older GitHub Enterprise Server still does).
	DispatchNoContent bool
	// MaxInputs is the most inputs a dispatch may carry (25, GitHub's limit, when zero).
	MaxInputs int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// GitDir is a bare git repository holding the repository's branches; with it the fake also
	// serves pull requests, issues, statuses and branch protection (pulls.go).
	GitDir string
	// Collaborators are the repository's people by login, with their role: read, triage, write,
	// maintain or admin (people.go).
	Collaborators map[string]string
	// Users, when set, are the logins GET /users/{login} knows besides the collaborators; when
	// nil every login exists.
	Users []string
	// AutoMergeMerges makes auto-merge merge (automerge.go): a pull request with auto-merge
	// armed merges once its base's protection is satisfied, as GitHub does; unset, it stays open
	// and Mergeable says whether it could.
	AutoMergeMerges bool
}

// RateLimitKind is which of GitHub's rate limits a request hits.
type RateLimitKind int

// The rate limits the fake can inject.
const (
	// Primary is the hourly quota running out: 403 with X-RateLimit-Remaining: 0 and
	// X-RateLimit-Reset, every request refused until the reset.
	Primary RateLimitKind = iota
	// Secondary is GitHub's abuse protection: 403 with Retry-After and a "secondary rate
	// limit" message.
	Secondary
	// TooManyRequests is 429 with Retry-After.
	TooManyRequests
)

// String names the kind as the tests and messages do: primary, secondary, 429.
func (k RateLimitKind) String() string {
	switch k {
	case Primary:
		return "primary"
	case Secondary:
		return "secondary"
	case TooManyRequests:
		return "429"
	}
	return fmt.Sprintf("RateLimitKind(%d)", int(k))
}

// Run is a workflow run as the fake holds it; Runs returns snapshots of them.
type Run struct {
	ID int64
	// Workflow is the workflow's file name; WorkflowID its numeric id.
	Workflow   string
	WorkflowID int64
	// Name is the workflow's name; DisplayTitle the rendered run-name.
	Name, DisplayTitle string
	Event              string
	// Branch is the run's head_branch (the dispatch ref).
	Branch string
	// Actor is the login that dispatched the run (Options.Actor, or github-actions[bot] for a
	// dispatch made with Options.JobToken): GitHub's actor and triggering_actor of the run.
	Actor      string
	Status     string
	Conclusion string
	RunNumber  int
	// Inputs are the inputs the run was dispatched with, verbatim (GitHub does not report
	// them; the fake keeps them for assertions).
	Inputs    map[string]string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Visible is whether the run exists yet for the API (see Options.Visibility).
	Visible bool
	// CancelRequested is whether a cancel was accepted.
	CancelRequested bool
}

// Request is one request the fake answered.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Status int
}

// run is the fake's state of one run.
type run struct {
	Run
	visibleAt   time.Time
	visibleList int // the list count at which it becomes visible
	cancelAt    time.Time
	approvals   []approvalEntry // the review history (approvals.go)
}

// trip is a queued rate-limit injection.
type trip struct {
	kind RateLimitKind
	wait time.Duration
}

// Server is the fake GitHub API. It is safe for concurrent use.
type Server struct {
	// URL is the API base URL to give a client, with a trailing slash.
	URL string

	srv  *httptest.Server
	mux  *http.ServeMux // routes (mux.go)
	opts Options
	wfID map[string]int64

	mu       sync.Mutex
	runs     map[int64]*run
	nextID   int64
	step     uint64 // state of the id step generator
	numbers  map[string]int
	lists    int
	requests []Request
	used     int
	// The rate limit in force until limitUntil, and the injections still to come.
	limitUntil time.Time
	limitKind  RateLimitKind
	trips      []trip
	// The code host (pulls.go).
	issues     map[int]*Issue
	statuses   map[string][]Status
	protection map[string]*Protection
	// Settings (settings.go).
	settings  Settings
	full      map[string]*FullProtection
	labels    map[string]string // name → color
	variables map[string]string
	// commentSeq numbers issue comments (pulls.go); commentAt holds each one's created_at and
	// updated_at.
	commentSeq int64
	commentAt  map[int64][2]time.Time
	// Who opened each issue and when, and the repository's issue events (issueevents.go).
	issueBy     map[int]string
	issueAt     map[int]time.Time
	issueEvents []issueEvent
	// Run jobs and their logs (jobs.go).
	jobs []*job
	// Run artifacts (artifacts.go).
	artifacts   []*artifact
	artifactSeq int64
	verified    map[string]bool // commits created through the Git Data API
	// The control endpoints (control.go).
	ctl controlState
	// Deployment environments (environments.go), by lower-cased name.
	environments map[string]*Environment
	// Pull request reviews by number (reviews.go), and their ids.
	reviews     map[int][]review
	reviewSeq   int64
	baseChanges map[int][]baseChange
	// before is called before each request is answered (BeforeEach).
	before func(method, path string)
}

// The statuses and conclusions GitHub reports, and the values the status filter accepts.
var (
	statuses    = []string{"requested", "queued", "pending", "waiting", "in_progress", "completed"}
	conclusions = []string{"success", "failure", "cancelled", "neutral", "skipped", "stale", "timed_out", "action_required", "startup_failure"}
)

// New starts a fake serving opts. Close it when done.
func New(opts Options) (*Server, error) {
	if opts.Owner == "" {
		opts.Owner = "o"
	}
	if opts.Repo == "" {
		opts.Repo = "r"
	}
	if opts.Actor == "" {
		opts.Actor = opts.Owner
	}
	if opts.Token == "" {
		return nil, fmt.Errorf("ghfake: Options.Token is required: every request must authenticate")
	}
	if opts.DefaultBranch == "" {
		opts.DefaultBranch = "main"
	}
	if opts.MaxInputs <= 0 {
		opts.MaxInputs = 25
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{opts: opts, wfID: map[string]int64{}, runs: map[int64]*run{}, nextID: 9_000_000_000, step: 1, numbers: map[string]int{},
		settings: Settings{DefaultWorkflowPermissions: "read"}}
	files := make([]string, 0, len(opts.Workflows))
	for f := range opts.Workflows {
		if f == "" || strings.ContainsAny(f, "/\\") {
			return nil, fmt.Errorf("ghfake: workflow %q: give the file name only, like develop.yml", f)
		}
		files = append(files, f)
	}
	slices.Sort(files)
	for i, f := range files {
		s.wfID[f] = 160_000_000 + int64(i)*7
	}
	s.mux = s.routes()
	// The URL is set before the server starts: its handlers read it, and a client in another
	// process gives the race detector no edge between this write and their reads.
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.URL = "http://" + s.srv.Listener.Addr().String() + "/"
	s.srv.Start()
	return s, nil
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Client returns an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// RateLimitNext makes the next n requests each trip a rate limit of kind that lasts wait
// (rounded up to whole seconds, as GitHub's headers are): that request and every request
// arriving before the limit lifts are refused, and only a request after it trips the next one.
// A client that retries too early is thus refused again, as on GitHub.
func (s *Server) RateLimitNext(n int, kind RateLimitKind, wait time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.trips = append(s.trips, trip{kind, wait})
	}
}

// Runs returns a snapshot of every run, visible or not, by ascending id.
func (s *Server) Runs() []Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	out := make([]Run, 0, len(s.runs))
	for _, r := range s.runs {
		s.advance(r, now)
		out = append(out, r.snapshot())
	}
	slices.SortFunc(out, func(a, b Run) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Run returns a snapshot of one run.
func (s *Server) Run(id int64) (Run, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		return Run{}, false
	}
	s.advance(r, s.opts.Now())
	return r.snapshot(), true
}

// Requests returns the requests answered so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// AddRun creates a queued, visible run of a workflow fired by event (e.g. "schedule"), as if
// GitHub had started it by itself, and returns its id.
func (s *Server) AddRun(workflow, event string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wf, ok := s.opts.Workflows[workflow]
	if !ok {
		return 0, fmt.Errorf("ghfake: no workflow %q", workflow)
	}
	r := s.create(workflow, wf, event, s.opts.DefaultBranch, s.opts.Actor, nil)
	r.Visible = true
	return r.ID, nil
}

// Start moves a run to in_progress.
func (s *Server) Start(id int64) error { return s.SetStatus(id, "in_progress") }

// SetStatus moves a run that has not completed to another status that is not completed:
// requested, queued, pending, waiting or in_progress.
func (s *Server) SetStatus(id int64, status string) error {
	if status == "completed" || !slices.Contains(statuses, status) {
		return fmt.Errorf("ghfake: status %q: use one of requested, queued, pending, waiting, in_progress (Complete ends a run)", status)
	}
	return s.update(id, func(r *run) { r.Status = status })
}

// Complete ends a run with a conclusion (success, failure, cancelled, neutral, skipped,
// stale, timed_out, action_required, startup_failure).
func (s *Server) Complete(id int64, conclusion string) error {
	if !slices.Contains(conclusions, conclusion) {
		return fmt.Errorf("ghfake: conclusion %q: use one of %s", conclusion, strings.Join(conclusions, ", "))
	}
	return s.update(id, func(r *run) { r.Status, r.Conclusion = "completed", conclusion })
}

func (s *Server) update(id int64, f func(*run)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		return fmt.Errorf("ghfake: no run %d", id)
	}
	now := s.opts.Now()
	s.advance(r, now)
	if r.Status == "completed" {
		return fmt.Errorf("ghfake: run %d already completed (%s)", id, r.Conclusion)
	}
	f(r)
	r.UpdatedAt = now
	return nil
}

// create adds a run; the caller holds mu.
func (s *Server) create(file string, wf Workflow, event, branch, actor string, inputs map[string]string) *run {
	now := s.opts.Now()
	// Ids are large, increasing and not contiguous, as GitHub's are: a client that guesses
	// the next id, or counts runs, is caught.
	s.step = s.step*6364136223846793005 + 1442695040888963407
	s.nextID += 1 + int64(s.step>>33)%997
	s.numbers[file]++
	name := workflowName(file, wf)
	title := name
	if c := inputs[CorrelationInput]; c != "" && wf.RunName != "" {
		title = strings.ReplaceAll(wf.RunName, "{0}", c)
	}
	r := &run{Run: Run{
		ID: s.nextID, Workflow: file, WorkflowID: s.wfID[file], Name: name, DisplayTitle: title,
		Event: event, Branch: branch, Actor: actor, Status: "queued", RunNumber: s.numbers[file],
		Inputs: inputs, CreatedAt: now.UTC().Truncate(time.Second), UpdatedAt: now.UTC().Truncate(time.Second),
	}}
	r.visibleAt = now.Add(s.opts.Visibility)
	r.visibleList = s.lists + s.opts.VisibleAfterLists
	s.runs[r.ID] = r
	return r
}

func workflowName(file string, wf Workflow) string {
	if wf.Name != "" {
		return wf.Name
	}
	return strings.TrimSuffix(strings.TrimSuffix(file, ".yml"), ".yaml")
}

// advance applies what time and list calls have done to a run; the caller holds mu.
func (s *Server) advance(r *run, now time.Time) {
	if !r.Visible && !now.Before(r.visibleAt) && s.lists >= r.visibleList {
		r.Visible = true
	}
	if r.CancelRequested && r.Status != "completed" && !now.Before(r.cancelAt) {
		r.Status, r.Conclusion, r.UpdatedAt = "completed", "cancelled", now.UTC()
	}
}

func (r *run) snapshot() Run {
	c := r.Run
	if r.Inputs != nil {
		c.Inputs = make(map[string]string, len(r.Inputs))
		for k, v := range r.Inputs {
			c.Inputs[k] = v
		}
	}
	return c
}
