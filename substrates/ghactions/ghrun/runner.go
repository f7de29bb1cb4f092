package ghrun

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/ghactions/wire"
)

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	// Repo is the repository the fleet is installed in, "owner/name".
	Repo string
	// Token authenticates every request (TokenFromEnv reads it from the environment). It needs
	// actions: write to launch and cancel, actions: read to get and list, and metadata: read
	// to find the default branch. It never appears in an error.
	Token string
	// BaseURL is the API root ("" for https://api.github.com/; for GitHub Enterprise Server,
	// https://HOST/api/v3/); tests give a fake's URL.
	BaseURL string
	// Actors are the fleet's actors: each has its workflow at .github/workflows/<actor>.yml.
	// Runs of any other workflow are not this runner's sessions.
	Actors []string
	// Ref is the branch runs are dispatched on ("" for the repository's default branch, asked of
	// GitHub once). Compiled workflows honor a dispatched run on the default branch only.
	Ref string
	// HTTPClient makes the requests (a client with a one-minute timeout when nil).
	HTTPClient *http.Client
	// PollInterval is the pause between looks for a dispatched run (2s when zero), and
	// FindTimeout how long a launch looks for it before giving up (2 minutes when zero).
	PollInterval, FindTimeout time.Duration
	// MaxRetryWait is the longest rate-limit wait a call sits out before retrying (2 minutes
	// when zero); a longer one fails the call with the time to retry after.
	MaxRetryWait time.Duration
	// Now is the clock (time.Now when nil): the created filter of a launch and rate-limit waits
	// are computed from it.
	Now func() time.Time
}

// Defaults of RunnerOptions, and the bounds of a call's retries.
const (
	defaultPollInterval = 2 * time.Second
	defaultFindTimeout  = 2 * time.Minute
	defaultMaxRetryWait = 2 * time.Minute
	// maxRetries bounds how often one call is retried after rate limits.
	maxRetries = 5
	// createdSlack widens the created filter of a launch's search below the dispatch time, for
	// the skew between this clock and GitHub's.
	createdSlack = 2 * time.Minute
)

// inFlight are the statuses of a run that has not ended, in the order a run goes through them:
// listing them in this order, a run moving on between two queries is met again in a later
// one rather than missed.
var inFlight = []string{"requested", "queued", "pending", "waiting", "in_progress"}

var (
	repoRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`) })
	actorRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]*$`) }) // ir's actor names
)

// Runner realizes the Runner contract over GitHub Actions: a session is a workflow run of an
// actor's workflow. Launch dispatches the workflow (workflow_dispatch) with the params as its
// inputs, asking GitHub for the run's details; the session id is the run id GitHub assigned.
// A server that answers without them (204) has the run found by its run-name, which echoes a
// correlation id. The correlation input also carries the params (runparams.go), so Get returns
// them from any process. It is safe for concurrent use.
//
// A run maps to a session status so: requested, queued, pending, waiting and in_progress are
// running; completed is done when its conclusion is success, cancelled when cancelled, and
// failed otherwise (failure, timed_out, startup_failure, action_required, neutral, skipped,
// stale). GitHub cannot pause a run, so no session is ever paused.
type Runner struct {
	opts        RunnerOptions
	owner, repo string
	gh          *github.Client
	refMu       sync.Mutex // guards ref: the default branch is asked for once
	ref         string
	mu          sync.Mutex                // guards params and cancelled
	params      map[int64]ir.LaunchParams // of the sessions this runner launched
	cancelled   map[int64]bool            // runs whose cancel this runner had accepted
	actors      []string                  // in the given order, for messages
	isActor     map[string]bool
}

var _ ir.Runner = (*Runner)(nil)

// TokenFromEnv returns $GITHUB_TOKEN, or else $GH_TOKEN.
func TokenFromEnv() string {
	if t := os.Getenv("GITHUB_TOKEN"); t != "" {
		return t
	}
	return os.Getenv("GH_TOKEN")
}

// NewRunner checks opts and returns a runner; it makes no request.
func NewRunner(opts RunnerOptions) (*Runner, error) {
	var problems []string
	if !repoRe().MatchString(opts.Repo) {
		problems = append(problems, fmt.Sprintf("repository %q: give it as owner/name, like octo-org/app", opts.Repo))
	}
	if opts.Token == "" {
		problems = append(problems, "no token: set GITHUB_TOKEN or GH_TOKEN (it needs actions: write on the repository)")
	}
	if len(opts.Actors) == 0 {
		problems = append(problems, "no actors: name the fleet's actors, whose workflows are .github/workflows/<actor>.yml")
	}
	for i, a := range opts.Actors {
		switch {
		case !actorRe().MatchString(a) || len(a) > ir.MaxActorName:
			problems = append(problems, fmt.Sprintf("actor %q: not an actor name (lower-case letters, digits, - and _, starting with a letter)", a))
		case slices.Contains(opts.Actors[:i], a):
			problems = append(problems, fmt.Sprintf("actor %q is named twice", a))
		}
	}
	base := &url.URL{Scheme: "https", Host: "api.github.com", Path: "/"}
	if opts.BaseURL != "" {
		u, err := url.Parse(opts.BaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			problems = append(problems, fmt.Sprintf("base URL %q: give the API root as an http(s) URL, like https://api.github.com/", opts.BaseURL))
		} else {
			base = u
			if !strings.HasSuffix(base.Path, "/") {
				base.Path += "/"
			}
		}
	}
	if opts.Ref != "" && (strings.ContainsAny(opts.Ref, " ~^:?*[\\") || strings.Contains(opts.Ref, "..")) {
		problems = append(problems, fmt.Sprintf("ref %q: not a branch name", opts.Ref))
	}
	if opts.PollInterval < 0 || opts.FindTimeout < 0 || opts.MaxRetryWait < 0 {
		problems = append(problems, "PollInterval, FindTimeout and MaxRetryWait cannot be negative")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("github runner: %s", strings.Join(problems, "; "))
	}
	opts.HTTPClient = cmp.Or(opts.HTTPClient, &http.Client{Timeout: time.Minute})
	opts.PollInterval = cmp.Or(opts.PollInterval, defaultPollInterval)
	opts.FindTimeout = cmp.Or(opts.FindTimeout, defaultFindTimeout)
	opts.MaxRetryWait = cmp.Or(opts.MaxRetryWait, defaultMaxRetryWait)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	owner, repo, _ := strings.Cut(opts.Repo, "/")
	gh := github.NewClient(opts.HTTPClient).WithAuthToken(opts.Token)
	gh.BaseURL = base
	r := &Runner{opts: opts, owner: owner, repo: repo, gh: gh, ref: opts.Ref, params: map[int64]ir.LaunchParams{},
		cancelled: map[int64]bool{}, actors: slices.Clone(opts.Actors), isActor: map[string]bool{}}
	for _, a := range opts.Actors {
		r.isActor[a] = true
	}
	return r, nil
}

// Launch dispatches the agent's workflow with params as its inputs, verbatim, plus the
// correlation input, and returns the session of the run GitHub started for it.
func (r *Runner) Launch(ctx context.Context, agent string, params ir.LaunchParams) (ir.Session, error) {
	if !r.isActor[agent] {
		return ir.Session{}, fmt.Errorf("launching %q in %s: not an actor of this fleet (%s)", agent, r.opts.Repo, ir.Suggest(agent, r.actors))
	}
	if _, ok := params[wire.CorrelationInput]; ok {
		return ir.Session{}, fmt.Errorf("launching %s in %s: param %s is reserved: the runner sets it to find the run", agent, r.opts.Repo, wire.CorrelationInput)
	}
	ref, err := r.dispatchRef(ctx)
	if err != nil {
		return ir.Session{}, err
	}
	corr, err := Correlation(params)
	if err != nil {
		return ir.Session{}, fmt.Errorf("launching %s in %s: %w", agent, r.opts.Repo, err)
	}
	inputs := make(map[string]any, len(params)+1)
	for k, v := range params {
		inputs[k] = v
	}
	inputs[wire.CorrelationInput] = corr
	file := agent + ".yml"
	since := r.opts.Now().Add(-createdSlack)
	what := fmt.Sprintf("dispatching workflow %s in %s on %s", file, r.opts.Repo, ref)
	details, err := r.dispatch(ctx, file, ref, inputs)
	if err != nil {
		if statusOf(err) == http.StatusNotFound {
			return ir.Session{}, fmt.Errorf("%s: no such workflow (404): is the fleet installed on %s, and can the token see the repository?", what, ref)
		}
		return ir.Session{}, r.fail(what, "actions: write", err)
	}
	var run *github.WorkflowRun
	if details.ID > 0 {
		// GitHub named the run: it is queued, whether or not lists show it yet.
		run = &github.WorkflowRun{ID: github.Int64(details.ID), Status: github.String("queued")}
	} else if run, err = r.findRun(ctx, agent, ref, corr, since); err != nil {
		return ir.Session{}, err
	}
	kept := maps.Clone(params)
	if kept == nil {
		kept = ir.LaunchParams{}
	}
	r.mu.Lock()
	r.params[run.GetID()] = kept
	r.mu.Unlock()
	return ir.Session{ID: strconv.FormatInt(run.GetID(), 10), Agent: agent, Status: runStatus(run), Params: maps.Clone(kept)}, nil
}

// findRun looks for the run a dispatch started: the agent's workflow_dispatch run on ref, created
// since the dispatch, whose run-name carries the correlation id.
func (r *Runner) findRun(ctx context.Context, agent, ref, corr string, since time.Time) (*github.WorkflowRun, error) {
	file := agent + ".yml"
	want := agent + " [" + corr + "]"
	lost := func(why string) error {
		return fmt.Errorf("launching %s in %s: the dispatch of %s on %s was sent, but its run was not found %s: look for the run named %q (correlation id %s) in the repository's Actions tab", agent, r.opts.Repo, file, ref, why, want, corr)
	}
	deadline := time.Now().Add(r.opts.FindTimeout)
	opts := &github.ListWorkflowRunsOptions{Event: "workflow_dispatch", Branch: ref, Created: ">=" + since.UTC().Format(time.RFC3339), ListOptions: github.ListOptions{PerPage: 100}}
	for {
		for opts.Page = 1; ; {
			var runs *github.WorkflowRuns
			resp, err := r.do(ctx, func(ctx context.Context) (resp *github.Response, err error) {
				runs, resp, err = r.gh.Actions.ListWorkflowRunsByFileName(ctx, r.owner, r.repo, file, opts)
				return resp, err
			})
			if err != nil {
				return nil, fmt.Errorf("%w; %w", lost("(listing its runs failed)"), r.fail("listing runs of "+file, "actions: read", err))
			}
			for _, run := range runs.WorkflowRuns {
				// display_title is the run-name; an old GitHub Enterprise Server without it
				// reports the run-name as name.
				if run.GetDisplayTitle() == want || (run.GetDisplayTitle() == "" && run.GetName() == want) {
					return run, nil
				}
			}
			if resp.NextPage == 0 {
				break
			}
			opts.Page = resp.NextPage
		}
		if !time.Now().Before(deadline) {
			return nil, lost(fmt.Sprintf("within %s", r.opts.FindTimeout))
		}
		if err := sleep(ctx, r.opts.PollInterval); err != nil {
			return nil, fmt.Errorf("%w: %w", lost("before the launch was abandoned"), err)
		}
	}
}

// dispatchRef is the branch to dispatch on: the configured one, or the default branch.
func (r *Runner) dispatchRef(ctx context.Context) (string, error) {
	r.refMu.Lock()
	defer r.refMu.Unlock()
	if r.ref != "" {
		return r.ref, nil
	}
	var repo *github.Repository
	_, err := r.do(ctx, func(ctx context.Context) (resp *github.Response, err error) {
		repo, resp, err = r.gh.Repositories.Get(ctx, r.owner, r.repo)
		return resp, err
	})
	what := "finding the default branch of " + r.opts.Repo
	if err != nil {
		if statusOf(err) == http.StatusNotFound {
			return "", fmt.Errorf("%s: no such repository (404), or the token cannot see it", what)
		}
		return "", r.fail(what, "metadata: read", err)
	}
	if repo.GetDefaultBranch() == "" {
		return "", fmt.Errorf("%s: GitHub names none (is the repository empty?)", what)
	}
	r.ref = repo.GetDefaultBranch()
	return r.ref, nil
}

// Get returns the session of a run of the fleet's workflows; ok is false for an id that is no
// run id, an unknown run, or a run of another workflow.
func (r *Runner) Get(ctx context.Context, id string) (ir.Session, bool, error) {
	n, ok := parseRunID(id)
	if !ok {
		return ir.Session{}, false, nil
	}
	run, err := r.getRun(ctx, n)
	if run == nil || err != nil {
		return ir.Session{}, false, err
	}
	agent, ok := r.agentOf(run)
	if !ok {
		return ir.Session{}, false, nil
	}
	return r.session(run, agent), true, nil
}

// workflowRun is a run as GitHub reports it, with the path of its workflow file, which
// go-github v62 does not decode.
type workflowRun struct {
	github.WorkflowRun
	Path string `json:"path"`
}

// getRun fetches a run; nil without error when GitHub knows none.
func (r *Runner) getRun(ctx context.Context, id int64) (*workflowRun, error) {
	run := new(workflowRun)
	_, err := r.do(ctx, func(ctx context.Context) (*github.Response, error) {
		req, err := r.gh.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/actions/runs/%d", r.owner, r.repo, id), nil)
		if err != nil {
			return nil, err
		}
		return r.gh.Do(ctx, req, run)
	})
	if statusOf(err) == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, r.fail(fmt.Sprintf("getting workflow run %d in %s", id, r.opts.Repo), "actions: read", err)
	}
	return run, nil
}

// List returns the sessions in flight: the runs of the fleet's workflows that have not
// completed (every page of each in-flight status), by ascending id. A run this runner
// cancelled is not listed, even while GitHub still shows it in progress.
func (r *Runner) List(ctx context.Context) ([]ir.Session, error) {
	seen := map[int64]bool{}
	var out []ir.Session
	for _, status := range inFlight {
		for page := 1; ; {
			var runs struct {
				WorkflowRuns []*workflowRun `json:"workflow_runs"`
			}
			resp, err := r.do(ctx, func(ctx context.Context) (*github.Response, error) {
				q := url.Values{"status": {status}, "per_page": {"100"}, "page": {strconv.Itoa(page)}}
				req, err := r.gh.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/actions/runs?%s", r.owner, r.repo, q.Encode()), nil)
				if err != nil {
					return nil, err
				}
				return r.gh.Do(ctx, req, &runs)
			})
			if err != nil {
				return nil, r.fail(fmt.Sprintf("listing %s workflow runs in %s", status, r.opts.Repo), "actions: read", err)
			}
			for _, run := range runs.WorkflowRuns {
				agent, ok := r.agentOf(run)
				if !ok || seen[run.GetID()] {
					continue
				}
				seen[run.GetID()] = true
				if s := r.session(run, agent); !s.Status.Ended() {
					out = append(out, s)
				}
			}
			if resp.NextPage == 0 {
				break
			}
			page = resp.NextPage
		}
	}
	r.mu.Lock()
	for id := range r.cancelled {
		if !seen[id] {
			delete(r.cancelled, id) // GitHub has completed it: its own status says cancelled now
		}
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b ir.Session) int {
		x, _ := strconv.ParseInt(a.ID, 10, 64)
		y, _ := strconv.ParseInt(b.ID, 10, 64)
		return cmp.Compare(x, y)
	})
	return out, nil
}

// Cancel asks GitHub to cancel a run of the fleet's workflows. It is false for an unknown run,
// a run of another workflow, a run that completed, or one already cancelled.
func (r *Runner) Cancel(ctx context.Context, id string) (bool, error) {
	n, ok := parseRunID(id)
	if !ok {
		return false, nil
	}
	r.mu.Lock()
	if r.cancelled[n] {
		r.mu.Unlock()
		return false, nil
	}
	r.cancelled[n] = true // claimed: a concurrent cancel of the same run answers false
	r.mu.Unlock()
	done, err := r.cancel(ctx, n)
	if !done {
		r.mu.Lock()
		delete(r.cancelled, n)
		r.mu.Unlock()
	}
	return done, err
}

func (r *Runner) cancel(ctx context.Context, id int64) (bool, error) {
	run, err := r.getRun(ctx, id)
	if run == nil || err != nil {
		return false, err
	}
	if _, ok := r.agentOf(run); !ok || run.GetStatus() == "completed" {
		return false, nil
	}
	_, err = r.do(ctx, func(ctx context.Context) (*github.Response, error) {
		return r.gh.Actions.CancelWorkflowRunByID(ctx, r.owner, r.repo, id)
	})
	if err == nil {
		return true, nil
	}
	if c := statusOf(err); c == http.StatusConflict || c == http.StatusNotFound {
		return false, nil // it completed meanwhile, or vanished
	}
	return false, r.fail(fmt.Sprintf("cancelling workflow run %d in %s", id, r.opts.Repo), "actions: write", err)
}

// Update cancels a session when asked to; GitHub offers no other transition of a run from
// outside (no pause or resume, and a run ends done or failed by itself), so any other status
// is refused with an error wrapping ir.ErrUnsupported.
func (r *Runner) Update(ctx context.Context, id string, patch ir.Patch) (bool, error) {
	switch patch.Status {
	case ir.Cancelled:
		return r.Cancel(ctx, id)
	case ir.Paused, ir.Running, ir.Done, ir.Failed:
		return false, fmt.Errorf("updating session %s to %s: %w: GitHub cannot pause or resume a workflow run, nor end one as done or failed from outside (a run ends by itself; cancel it to stop it)", id, patch.Status, ir.ErrUnsupported)
	}
	return false, fmt.Errorf("updating session %s: unknown status %q (one of: running, paused, cancelled, done, failed)", id, patch.Status)
}

// session maps a run of agent's workflow to its session.
func (r *Runner) session(run *workflowRun, agent string) ir.Session {
	s := ir.Session{ID: strconv.FormatInt(run.GetID(), 10), Agent: agent, Status: runStatus(&run.WorkflowRun)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancelled[run.GetID()] && !s.Status.Ended() {
		s.Status = ir.Cancelled // the cancel was accepted; GitHub completes the run shortly
	}
	if p, ok := r.params[run.GetID()]; ok {
		s.Params = maps.Clone(p)
	} else if p, ok := decodeTitle(agent, cmp.Or(run.GetDisplayTitle(), run.GetName())); ok {
		s.Params = p // launched by another process: the params ride in the run's title
	}
	return s
}

// runStatus maps a run's status and conclusion to a session status (see Runner).
func runStatus(run *github.WorkflowRun) ir.SessionStatus {
	if run.GetStatus() != "completed" {
		return ir.Running
	}
	switch run.GetConclusion() {
	case "success":
		return ir.Done
	case "cancelled":
		return ir.Cancelled
	}
	return ir.Failed
}

// agentOf is the fleet actor whose workflow a run is of.
func (r *Runner) agentOf(run *workflowRun) (string, bool) {
	p, _, _ := strings.Cut(run.Path, "@") // a path may carry @ref
	name, ok := strings.CutPrefix(p, ".github/workflows/")
	if !ok {
		return "", false
	}
	name, ok = strings.CutSuffix(name, ".yml")
	return name, ok && r.isActor[name]
}

func parseRunID(id string) (int64, bool) {
	n, err := strconv.ParseInt(id, 10, 64)
	return n, err == nil && n > 0 && strconv.FormatInt(n, 10) == id
}
