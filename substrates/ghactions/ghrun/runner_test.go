package ghrun_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
)

const testToken = "ghp_test0123456789secret"

// sdlc compiles profiles/sdlc once: the fake enforces its workflows' declared inputs.
var sdlc = sync.OnceValues(func() (substrates.Output, error) {
	p, diags, err := ir.Check(filepath.Join("..", "..", "..", "profiles", "sdlc"))
	if err != nil {
		return substrates.Output{}, err
	}
	if diags.HasErrors() {
		return substrates.Output{}, fmt.Errorf("profile invalid:\n%s", diags)
	}
	r, _ := playbook.Resolve(p)
	return ghactions.Substrate{}.Compile(r)
})

// sdlcActors are the actors of profiles/sdlc.
var sdlcActors = []string{"pm", "draft", "develop", "reviewer", "planner", "strategist", "maintainer"}

// newFake serves the compiled sdlc workflows plus ci.yml, a workflow outside the fleet.
func newFake(t *testing.T, opts ghfake.Options) *ghfake.Server {
	t.Helper()
	out, err := sdlc()
	if err != nil {
		t.Fatal(err)
	}
	wfs, err := ghfake.WorkflowsFromOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	wfs["ci.yml"] = ghfake.Workflow{Name: "ci", Dispatch: true}
	opts.Token, opts.Workflows = testToken, wfs
	srv, err := ghfake.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func newTestRunner(t *testing.T, srv *ghfake.Server, mod func(*ghrun.RunnerOptions)) *ghrun.Runner {
	t.Helper()
	opts := ghrun.RunnerOptions{Repo: "o/r", Token: testToken, BaseURL: srv.URL, Actors: sdlcActors, HTTPClient: srv.Client(),
		PollInterval: 2 * time.Millisecond, FindTimeout: 10 * time.Second, MaxRetryWait: 10 * time.Second}
	if mod != nil {
		mod(&opts)
	}
	r, err := ghrun.NewRunner(opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func runID(t *testing.T, s ir.Session) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s.ID, 10, 64)
	if err != nil {
		t.Fatalf("session id %q is not a run id", s.ID)
	}
	return n
}

func fakeRun(t *testing.T, srv *ghfake.Server, id int64) ghfake.Run {
	t.Helper()
	run, ok := srv.Run(id)
	if !ok {
		t.Fatalf("the fake has no run %d", id)
	}
	return run
}

func TestLaunchReturnsTheRunGitHubCreated(t *testing.T) {
	t.Parallel()
	srv := newFake(t, ghfake.Options{})
	r := newTestRunner(t, srv, nil)
	ctx := context.Background()
	s, err := r.Launch(ctx, "develop", ir.LaunchParams{"ISSUE": "42"})
	if err != nil {
		t.Fatal(err)
	}
	runs := srv.Runs()
	if len(runs) != 1 || s.ID != strconv.FormatInt(runs[0].ID, 10) {
		t.Fatalf("session %q; the fake created %+v", s.ID, runs)
	}
	run := runs[0]
	if s.Agent != "develop" || s.Status != ir.Running || !maps.Equal(s.Params, ir.LaunchParams{"ISSUE": "42"}) {
		t.Errorf("session = %+v", s)
	}
	corr := run.Inputs["AUTONOMY_CORRELATION"]
	if !regexp.MustCompile(`^[0-9a-f]{16}\.[A-Za-z0-9_-]+$`).MatchString(corr) || run.Inputs["ISSUE"] != "42" || len(run.Inputs) != 2 {
		t.Errorf("dispatched inputs = %q", run.Inputs)
	}
	if run.DisplayTitle != "develop ["+corr+"]" || run.Branch != "main" || run.Event != "workflow_dispatch" || run.Workflow != "develop.yml" {
		t.Errorf("run = %+v", run)
	}

	// A second launch gets another run, and the default branch was asked for once.
	s2, err := r.Launch(ctx, "planner", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s2.ID == s.ID || s2.Params == nil || len(s2.Params) != 0 {
		t.Errorf("second session = %+v", s2)
	}
	repoGets := 0
	for _, q := range srv.Requests() {
		if q.Method == "GET" && q.Path == "/repos/o/r" {
			repoGets++
		}
	}
	if repoGets != 1 {
		t.Errorf("the default branch was asked for %d times, want once", repoGets)
	}
}

func TestLaunchOnAConfiguredRef(t *testing.T) {
	t.Parallel()
	srv := newFake(t, ghfake.Options{Branches: []string{"release"}})
	r := newTestRunner(t, srv, func(o *ghrun.RunnerOptions) { o.Ref = "release" })
	s, err := r.Launch(context.Background(), "draft", ir.LaunchParams{"ISSUE": "7"})
	if err != nil {
		t.Fatal(err)
	}
	if run := fakeRun(t, srv, runID(t, s)); run.Branch != "release" {
		t.Errorf("dispatched on %q, want release", run.Branch)
	}
	for _, q := range srv.Requests() {
		if q.Path == "/repos/o/r" {
			t.Errorf("asked for the default branch although a ref was given")
		}
	}
}

func TestLaunchPassesParamsVerbatim(t *testing.T) {
	t.Parallel()
	srv := newFake(t, ghfake.Options{})
	r := newTestRunner(t, srv, nil)
	for _, v := range []string{
		`it's "quoted"`, "$(rm -rf /)", "${{ github.token }}", "line one\nline two\n", "ünïcödé ✓ 日本語", "", " padded ", `back\slash`,
	} {
		params := ir.LaunchParams{"ITEM": v, "ASK": "ask: " + v}
		s, err := r.Launch(context.Background(), "maintainer", params)
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		run := fakeRun(t, srv, runID(t, s))
		if run.Inputs["ITEM"] != v || run.Inputs["ASK"] != "ask: "+v {
			t.Errorf("%q arrived as %q", v, run.Inputs)
		}
		if !maps.Equal(s.Params, params) {
			t.Errorf("session params = %q, want %q", s.Params, params)
		}
		got, ok, err := r.Get(context.Background(), s.ID)
		if err != nil || !ok || !maps.Equal(got.Params, params) {
			t.Errorf("Get = %+v, %v, %v", got, ok, err)
		}
	}
}

func TestConcurrentLaunchesGetTheirOwnRuns(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 8} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			t.Parallel()
			// A server without run details (204), and runs that appear late: every launch polls
			// for its correlation id while the others' runs are appearing.
			srv := newFake(t, ghfake.Options{DispatchNoContent: true, Visibility: 30 * time.Millisecond, VisibleAfterLists: n})
			r := newTestRunner(t, srv, nil)
			sessions := make([]ir.Session, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					sessions[i], errs[i] = r.Launch(context.Background(), "develop", ir.LaunchParams{"ISSUE": strconv.Itoa(i)})
				})
			}
			wg.Wait()
			seen := map[string]bool{}
			for i, s := range sessions {
				if errs[i] != nil {
					t.Fatalf("launch %d: %v", i, errs[i])
				}
				if seen[s.ID] {
					t.Fatalf("two launches got run %s", s.ID)
				}
				seen[s.ID] = true
				if run := fakeRun(t, srv, runID(t, s)); run.Inputs["ISSUE"] != strconv.Itoa(i) {
					t.Errorf("launch %d got run %s, dispatched with ISSUE=%q", i, s.ID, run.Inputs["ISSUE"])
				}
			}
			if len(srv.Runs()) != n {
				t.Errorf("%d runs for %d launches", len(srv.Runs()), n)
			}
		})
	}
}

func TestGetListCancel(t *testing.T) {
	t.Parallel()
	srv := newFake(t, ghfake.Options{})
	r := newTestRunner(t, srv, nil)
	ctx := context.Background()
	a, err := r.Launch(ctx, "develop", ir.LaunchParams{"ISSUE": "1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Launch(ctx, "reviewer", ir.LaunchParams{"PR": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(runID(t, b)); err != nil {
		t.Fatal(err)
	}
	got, ok, err := r.Get(ctx, b.ID)
	if err != nil || !ok || got.Agent != "reviewer" || got.Status != ir.Running || got.Params["PR"] != "2" {
		t.Fatalf("Get = %+v, %v, %v", got, ok, err)
	}
	list, err := r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ids := sessionIDs(list); !slices.Equal(ids, []string{a.ID, b.ID}) {
		t.Fatalf("List = %v, want %v", ids, []string{a.ID, b.ID})
	}

	if ok, err := r.Cancel(ctx, a.ID); !ok || err != nil {
		t.Fatalf("Cancel = %v, %v", ok, err)
	}
	if ok, err := r.Cancel(ctx, a.ID); ok || err != nil {
		t.Errorf("a second Cancel = %v, %v; want false", ok, err)
	}
	if run := fakeRun(t, srv, runID(t, a)); run.Status != "completed" || run.Conclusion != "cancelled" {
		t.Errorf("cancelled run is %s/%s", run.Status, run.Conclusion)
	}
	list, err = r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ids := sessionIDs(list); !slices.Equal(ids, []string{b.ID}) {
		t.Errorf("List after cancel = %v", ids)
	}
	if got, ok, _ := r.Get(ctx, a.ID); !ok || got.Status != ir.Cancelled {
		t.Errorf("Get after cancel = %+v, %v", got, ok)
	}

	// A completed run cannot be cancelled; neither can what is no run of the fleet.
	if err := srv.Complete(runID(t, b), "success"); err != nil {
		t.Fatal(err)
	}
	ci, err := srv.AddRun("ci.yml", "push")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{b.ID, "123", "abc", "", "-5", "0042", strconv.FormatInt(ci, 10)} {
		if ok, err := r.Cancel(ctx, id); ok || err != nil {
			t.Errorf("Cancel(%q) = %v, %v; want false", id, ok, err)
		}
	}
	if run := fakeRun(t, srv, ci); run.CancelRequested {
		t.Errorf("a run outside the fleet was cancelled")
	}
}

func TestCancelledRunLeavesListBeforeGitHubCompletesIt(t *testing.T) {
	t.Parallel()
	srv := newFake(t, ghfake.Options{CancelDelay: time.Hour})
	r := newTestRunner(t, srv, nil)
	ctx := context.Background()
	s, err := r.Launch(ctx, "draft", ir.LaunchParams{"ISSUE": "3"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(runID(t, s)); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.Cancel(ctx, s.ID); !ok || err != nil {
		t.Fatalf("Cancel = %v, %v", ok, err)
	}
	if run := fakeRun(t, srv, runID(t, s)); run.Status != "in_progress" || !run.CancelRequested {
		t.Fatalf("the fake should still show the run in progress: %+v", run)
	}
	list, err := r.List(ctx)
	if err != nil || len(list) != 0 {
		t.Errorf("List = %v, %v; want nothing in flight", list, err)
	}
	if got, ok, _ := r.Get(ctx, s.ID); !ok || got.Status != ir.Cancelled {
		t.Errorf("Get = %+v, %v; want cancelled", got, ok)
	}
	if ok, err := r.Cancel(ctx, s.ID); ok || err != nil {
		t.Errorf("a second Cancel = %v, %v; want false", ok, err)
	}
}

func sessionIDs(ss []ir.Session) []string {
	var ids []string
	for _, s := range ss {
		ids = append(ids, s.ID)
	}
	return ids
}

func TestStatusMapping(t *testing.T) {
	t.Parallel()
	srv := newFake(t, ghfake.Options{})
	r := newTestRunner(t, srv, nil)
	ctx := context.Background()
	for conclusion, want := range map[string]ir.SessionStatus{
		"success": ir.Done, "cancelled": ir.Cancelled, "failure": ir.Failed, "timed_out": ir.Failed,
		"startup_failure": ir.Failed, "action_required": ir.Failed, "neutral": ir.Failed, "skipped": ir.Failed, "stale": ir.Failed,
	} {
		id, err := srv.AddRun("planner.yml", "schedule")
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Complete(id, conclusion); err != nil {
			t.Fatal(err)
		}
		got, ok, err := r.Get(ctx, strconv.FormatInt(id, 10))
		if err != nil || !ok || got.Status != want || got.Agent != "planner" {
			t.Errorf("%s: Get = %+v, %v, %v; want %s", conclusion, got, ok, err, want)
		}
	}
	var inFlightIDs []string
	for _, status := range []string{"requested", "queued", "pending", "waiting", "in_progress"} {
		id, err := srv.AddRun("pm.yml", "schedule")
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.SetStatus(id, status); err != nil {
			t.Fatal(err)
		}
		inFlightIDs = append(inFlightIDs, strconv.FormatInt(id, 10))
		if got, ok, err := r.Get(ctx, strconv.FormatInt(id, 10)); err != nil || !ok || got.Status != ir.Running {
			t.Errorf("%s: Get = %+v, %v, %v; want running", status, got, ok, err)
		}
	}
	list, err := r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ids := sessionIDs(list); !slices.Equal(ids, inFlightIDs) {
		t.Errorf("List = %v, want every in-flight status %v", ids, inFlightIDs)
	}
}

func TestGetUnknownAndForeignRuns(t *testing.T) {
	t.Parallel()
	srv := newFake(t, ghfake.Options{})
	r := newTestRunner(t, srv, nil)
	ci, err := srv.AddRun("ci.yml", "push")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"123456", "abc", "", "1e3", strconv.FormatInt(ci, 10)} {
		if s, ok, err := r.Get(context.Background(), id); ok || err != nil {
			t.Errorf("Get(%q) = %+v, %v, %v; want not found", id, s, ok, err)
		}
	}
	if list, err := r.List(context.Background()); err != nil || len(list) != 0 {
		t.Errorf("List = %v, %v; the ci run is not the fleet's", list, err)
	}
}

func TestUpdate(t *testing.T) {
	t.Parallel()
	srv := newFake(t, ghfake.Options{})
	r := newTestRunner(t, srv, nil)
	ctx := context.Background()
	s, err := r.Launch(ctx, "develop", ir.LaunchParams{"ISSUE": "5"})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []ir.SessionStatus{ir.Paused, ir.Running, ir.Done, ir.Failed} {
		ok, err := r.Update(ctx, s.ID, ir.Patch{Status: st})
		if ok || !errors.Is(err, ir.ErrUnsupported) {
			t.Errorf("Update %s = %v, %v; want false and ErrUnsupported", st, ok, err)
		}
	}
	if ok, err := r.Update(ctx, s.ID, ir.Patch{Status: "bogus"}); ok || err == nil || errors.Is(err, ir.ErrUnsupported) || !strings.Contains(err.Error(), "paused") {
		t.Errorf("Update bogus = %v, %v", ok, err)
	}
	if ok, err := r.Update(ctx, s.ID, ir.Patch{Status: ir.Cancelled}); !ok || err != nil {
		t.Errorf("Update cancelled = %v, %v", ok, err)
	}
	if run := fakeRun(t, srv, runID(t, s)); run.Conclusion != "cancelled" {
		t.Errorf("Update cancelled left the run %s/%s", run.Status, run.Conclusion)
	}
}

func TestListReadsEveryPage(t *testing.T) {
	t.Parallel()
	srv := newFake(t, ghfake.Options{})
	r := newTestRunner(t, srv, nil)
	var want []string
	for i := range 230 {
		id, err := srv.AddRun(sdlcActors[i%len(sdlcActors)]+".yml", "workflow_dispatch")
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if err := srv.Start(id); err != nil {
				t.Fatal(err)
			}
		}
		want = append(want, strconv.FormatInt(id, 10))
	}
	list, err := r.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ids := sessionIDs(list); !slices.Equal(ids, want) {
		t.Fatalf("List returned %d sessions, want all %d by id", len(ids), len(want))
	}
	pages := map[string]bool{}
	for _, q := range srv.Requests() {
		if q.Path == "/repos/o/r/actions/runs" && q.Query.Get("status") == "queued" {
			pages[q.Query.Get("page")] = true
		}
	}
	if !pages["1"] || !pages["2"] {
		t.Errorf("queued runs were read from pages %v; want more than one", pages)
	}
}

func TestRateLimitsAreWaitedOut(t *testing.T) {
	t.Parallel()
	for _, kind := range []ghfake.RateLimitKind{ghfake.Primary, ghfake.Secondary, ghfake.TooManyRequests} {
		t.Run(kind.String(), func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, ghfake.Options{})
			r := newTestRunner(t, srv, nil)
			srv.RateLimitNext(1, kind, time.Second)
			s, err := r.Launch(context.Background(), "develop", ir.LaunchParams{"ISSUE": "9"})
			if err != nil {
				t.Fatalf("Launch through a %s rate limit: %v", kind, err)
			}
			if run := fakeRun(t, srv, runID(t, s)); run.Inputs["ISSUE"] != "9" {
				t.Errorf("run dispatched with %q", run.Inputs)
			}
			refused := 0
			for _, q := range srv.Requests() {
				if q.Status == 403 || q.Status == 429 {
					refused++
				}
			}
			// The runner waited the limit out: it did not retry while the limit was in force.
			if refused != 1 {
				t.Errorf("%d requests refused; want the one that tripped the limit", refused)
			}
		})
	}
}

func TestRateLimitLongerThanMaxRetryWaitFails(t *testing.T) {
	t.Parallel()
	for _, kind := range []ghfake.RateLimitKind{ghfake.Primary, ghfake.Secondary, ghfake.TooManyRequests} {
		srv := newFake(t, ghfake.Options{})
		r := newTestRunner(t, srv, func(o *ghrun.RunnerOptions) { o.MaxRetryWait = 50 * time.Millisecond })
		srv.RateLimitNext(1, kind, 30*time.Second)
		start := time.Now()
		_, err := r.List(context.Background())
		if err == nil {
			t.Fatalf("%s: List succeeded through a 30s limit", kind)
		}
		msg := err.Error()
		if !strings.Contains(msg, "listing") || !strings.Contains(msg, "rate limit") || !regexp.MustCompile(`retry after \d{4}-\d\d-\d\dT`).MatchString(msg) {
			t.Errorf("%s: error %q should say what failed and when to retry", kind, msg)
		}
		if time.Since(start) > 20*time.Second {
			t.Errorf("%s: the runner waited before giving up", kind)
		}
		if strings.Contains(msg, testToken) {
			t.Errorf("the error shows the token")
		}
		if want := map[ghfake.RateLimitKind]string{ghfake.Primary: "primary", ghfake.Secondary: "secondary", ghfake.TooManyRequests: "secondary"}[kind]; !strings.Contains(msg, want) {
			t.Errorf("%s: error %q does not name the %s limit", kind, msg, want)
		}
		if reqs := srv.Requests(); len(reqs) != 1 {
			t.Errorf("%s: %d requests; the runner should give up without retrying", kind, len(reqs))
		}
	}
}

func TestRateLimitRetriesAreBounded(t *testing.T) {
	t.Parallel()
	srv := newFake(t, ghfake.Options{})
	r := newTestRunner(t, srv, nil)
	srv.RateLimitNext(ghrun.MaxRetries+1, ghfake.TooManyRequests, time.Second)
	_, err := r.List(context.Background())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("still in force after %d tries", ghrun.MaxRetries+1)) {
		t.Fatalf("List = %v; want it to give up after %d tries", err, ghrun.MaxRetries+1)
	}
	if n := len(srv.Requests()); n != ghrun.MaxRetries+1 {
		t.Errorf("%d requests, want %d", n, ghrun.MaxRetries+1)
	}
}

func TestTokenProblems(t *testing.T) {
	t.Parallel()
	const readOnly = "ghp_readonly0123456789"
	srv := newFake(t, ghfake.Options{ReadOnlyToken: readOnly})
	ctx := context.Background()

	bad := newTestRunner(t, srv, func(o *ghrun.RunnerOptions) { o.Token = "ghp_wrong0123456789secret" })
	_, err := bad.Launch(ctx, "develop", ir.LaunchParams{"ISSUE": "1"})
	if err == nil || !strings.Contains(err.Error(), "rejected the token") || strings.Contains(err.Error(), "ghp_wrong") {
		t.Errorf("bad token: Launch error %v", err)
	}
	if _, err := bad.List(ctx); err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "ghp_wrong") {
		t.Errorf("bad token: List error %v", err)
	}

	ro := newTestRunner(t, srv, func(o *ghrun.RunnerOptions) { o.Token = readOnly })
	_, err = ro.Launch(ctx, "develop", ir.LaunchParams{"ISSUE": "1"})
	if err == nil || !strings.Contains(err.Error(), "lacks access") || !strings.Contains(err.Error(), "actions: write") || strings.Contains(err.Error(), readOnly) {
		t.Errorf("read-only token: Launch error %v", err)
	}
	if _, err := ro.List(ctx); err != nil {
		t.Errorf("read-only token: List = %v; reading needs actions: read only", err)
	}
}

func TestLaunchRefusals(t *testing.T) {
	t.Parallel()
	// pm.yml as an installation compiled before launch targets were made dispatchable has it:
	// with no workflow_dispatch trigger, which GitHub refuses to dispatch.
	out, err := sdlc()
	if err != nil {
		t.Fatal(err)
	}
	wfs, err := ghfake.WorkflowsFromOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	wfs["pm.yml"] = ghfake.Workflow{Name: "pm"}
	srv, err := ghfake.New(ghfake.Options{Token: testToken, Workflows: wfs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	r := newTestRunner(t, srv, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		agent  string
		params ir.LaunchParams
		want   []string
	}{
		{"nobody", nil, []string{`"nobody"`, "not an actor", "develop"}},
		{"devlop", nil, []string{`did you mean "develop"?`}},
		{"develop", ir.LaunchParams{"ISSUE": "1", "EXTRA": "x"}, []string{"develop.yml", "422", `"EXTRA"`}},
		{"develop", ir.LaunchParams{"AUTONOMY_CORRELATION": "x"}, []string{"reserved"}},
		{"pm", nil, []string{"pm.yml", "workflow_dispatch"}},
	} {
		before := len(srv.Runs())
		_, err := r.Launch(ctx, tc.agent, tc.params)
		if err == nil {
			t.Errorf("Launch(%s, %v) succeeded", tc.agent, tc.params)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Launch(%s, %v): error %q does not say %s", tc.agent, tc.params, err, w)
			}
		}
		if len(srv.Runs()) != before {
			t.Errorf("Launch(%s, %v) created a run", tc.agent, tc.params)
		}
	}
}

func TestLaunchWhoseRunNeverAppears(t *testing.T) {
	t.Parallel()
	srv := newFake(t, ghfake.Options{DispatchNoContent: true, Visibility: time.Hour})
	r := newTestRunner(t, srv, func(o *ghrun.RunnerOptions) { o.FindTimeout = 30 * time.Millisecond })
	_, err := r.Launch(context.Background(), "develop", ir.LaunchParams{"ISSUE": "1"})
	runs := srv.Runs()
	if err == nil || len(runs) != 1 {
		t.Fatalf("Launch = %v with %d runs", err, len(runs))
	}
	corr := runs[0].Inputs["AUTONOMY_CORRELATION"]
	for _, w := range []string{"was sent", "not found", corr, "develop [" + corr + "]"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}

	// A launch abandoned by its caller says the same.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Launch(ctx, "develop", ir.LaunchParams{"ISSUE": "2"}); err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Launch = %v", err)
	}
}

func TestNewRunnerChecksOptions(t *testing.T) {
	t.Parallel()
	good := ghrun.RunnerOptions{Repo: "o/r", Token: "t", Actors: []string{"a"}}
	for _, tc := range []struct {
		mod  func(*ghrun.RunnerOptions)
		want string
	}{
		{func(o *ghrun.RunnerOptions) { o.Repo = "justname" }, "owner/name"},
		{func(o *ghrun.RunnerOptions) { o.Repo = "a/b/c" }, "owner/name"},
		{func(o *ghrun.RunnerOptions) { o.Token = "" }, "GITHUB_TOKEN"},
		{func(o *ghrun.RunnerOptions) { o.Actors = nil }, "no actors"},
		{func(o *ghrun.RunnerOptions) { o.Actors = []string{"Bad Name"} }, `"Bad Name"`},
		{func(o *ghrun.RunnerOptions) { o.Actors = []string{"a", "a"} }, "twice"},
		{func(o *ghrun.RunnerOptions) { o.BaseURL = "not a url" }, "base URL"},
		{func(o *ghrun.RunnerOptions) { o.Ref = "bad..ref" }, "branch"},
		{func(o *ghrun.RunnerOptions) { o.PollInterval = -1 }, "negative"},
	} {
		o := good
		tc.mod(&o)
		if _, err := ghrun.NewRunner(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewRunner(%+v) = %v; want an error saying %s", o, err, tc.want)
		}
	}
	if _, err := ghrun.NewRunner(good); err != nil {
		t.Errorf("NewRunner(%+v) = %v", good, err)
	}
}

func TestTokenFromEnv(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GH_TOKEN", "from-gh")
	if got := ghrun.TokenFromEnv(); got != "from-gh" {
		t.Errorf("TokenFromEnv = %q, want GH_TOKEN's", got)
	}
	t.Setenv("GITHUB_TOKEN", "from-github")
	if got := ghrun.TokenFromEnv(); got != "from-github" {
		t.Errorf("TokenFromEnv = %q, want GITHUB_TOKEN's", got)
	}
}
