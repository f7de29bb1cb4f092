package ghfake

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const tok = "secret-token"

func newServer(t *testing.T, opts Options) *Server {
	t.Helper()
	opts.Token = tok
	if opts.Workflows == nil {
		opts.Workflows = map[string]Workflow{
			"develop.yml": {Name: "develop", Dispatch: true, Inputs: []string{"ISSUE", CorrelationInput}, RunName: "develop [{0}]"},
			"pm.yml":      {Name: "pm"},
		}
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// call makes one request and decodes a JSON answer into a generic value.
func call(t *testing.T, s *Server, method, path, body string, auth ...string) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, strings.TrimSuffix(s.URL, "/")+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	a := "Bearer " + tok
	if len(auth) > 0 {
		a = auth[0]
	}
	if a != "" {
		req.Header.Set("Authorization", a)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if len(data) > 0 {
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s %s: body is not a JSON object: %q", method, path, data)
		}
	}
	return resp, v
}

// wantError checks GitHub's error shape.
func wantError(t *testing.T, resp *http.Response, body map[string]any, code int, message string) {
	t.Helper()
	if resp.StatusCode != code {
		t.Errorf("status %d, want %d (%v)", resp.StatusCode, code, body)
	}
	if m, _ := body["message"].(string); !strings.Contains(m, message) {
		t.Errorf("message %q, want it to contain %q", m, message)
	}
	if d, _ := body["documentation_url"].(string); !strings.HasPrefix(d, "https://docs.github.com/") {
		t.Errorf("documentation_url %q", d)
	}
}

func dispatch(t *testing.T, s *Server, wf, body string) (*http.Response, map[string]any) {
	t.Helper()
	return call(t, s, "POST", "/repos/o/r/actions/workflows/"+wf+"/dispatches", body)
}

func TestAuthentication(t *testing.T) {
	s := newServer(t, Options{})
	resp, body := call(t, s, "GET", "/repos/o/r", "", "")
	wantError(t, resp, body, 401, "Requires authentication")
	resp, body = call(t, s, "GET", "/repos/o/r", "", "Bearer wrong")
	wantError(t, resp, body, 401, "Bad credentials")
	for _, a := range []string{"Bearer " + tok, "token " + tok, "bearer " + tok} {
		if resp, _ := call(t, s, "GET", "/repos/o/r", "", a); resp.StatusCode != 200 {
			t.Errorf("Authorization %q: status %d", a, resp.StatusCode)
		}
	}
}

func TestRepository(t *testing.T) {
	s := newServer(t, Options{Owner: "Octo", Repo: "app", DefaultBranch: "trunk"})
	resp, body := call(t, s, "GET", "/repos/octo/APP", "")
	if resp.StatusCode != 200 || body["default_branch"] != "trunk" || body["full_name"] != "Octo/app" {
		t.Errorf("repo = %d %v", resp.StatusCode, body)
	}
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Used", "X-RateLimit-Resource"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("no %s header", h)
		}
	}
	resp, body = call(t, s, "GET", "/repos/octo/other", "")
	wantError(t, resp, body, 404, "Not Found")
}

func TestDispatch(t *testing.T) {
	s := newServer(t, Options{Branches: []string{"dev"}, MaxInputs: 3})
	for _, tc := range []struct {
		wf, body string
		code     int
		message  string
	}{
		{"nosuch.yml", `{"ref":"main"}`, 404, "Not Found"},
		{"pm.yml", `{"ref":"main"}`, 422, "Workflow does not have 'workflow_dispatch' trigger"},
		{"develop.yml", `{}`, 422, `"ref" wasn't supplied`},
		{"develop.yml", `{"ref":"nosuch"}`, 422, "No ref found for: nosuch"},
		{"develop.yml", `{"ref":"main","inputs":{"ISSUE":"1","B":"x","A":"y"}}`, 422, `Unexpected inputs provided: ["A", "B"]`},
		{"develop.yml", `{"ref":"main","inputs":{"ISSUE":5}}`, 422, "is not a string"},
		{"develop.yml", `{"ref":"main","inputs":{"a":"1","b":"2","c":"3","d":"4"}}`, 422, "maximum of 3"},
		{"develop.yml", `{"ref":`, 400, "Problems parsing JSON"},
	} {
		resp, body := dispatch(t, s, tc.wf, tc.body)
		wantError(t, resp, body, tc.code, tc.message)
	}
	if n := len(s.Runs()); n != 0 {
		t.Fatalf("refused dispatches created %d runs", n)
	}

	resp, body := dispatch(t, s, "develop.yml", `{"ref":"refs/heads/dev","inputs":{"ISSUE":"a \"b\"\n${{ x }}","AUTONOMY_CORRELATION":"c0ffee"}}`)
	if resp.StatusCode != 204 || body != nil {
		t.Fatalf("dispatch = %d %v, want 204 and no body", resp.StatusCode, body)
	}
	if resp, _ := dispatch(t, s, "develop.yml", `{"ref":"main"}`); resp.StatusCode != 204 {
		t.Fatalf("second dispatch = %d", resp.StatusCode)
	}
	runs := s.Runs()
	if len(runs) != 2 {
		t.Fatalf("%d runs", len(runs))
	}
	r := runs[0]
	if r.Inputs["ISSUE"] != "a \"b\"\n${{ x }}" || r.DisplayTitle != "develop [c0ffee]" || r.Branch != "dev" || r.Status != "queued" || r.Event != "workflow_dispatch" || r.RunNumber != 1 {
		t.Errorf("run = %+v", r)
	}
	if runs[1].DisplayTitle != "develop" || runs[1].RunNumber != 2 || runs[1].ID <= r.ID || runs[1].ID == r.ID+1 || r.ID < 9_000_000_000 {
		t.Errorf("ids %d, %d and second run %+v: want large, increasing, non-contiguous ids", r.ID, runs[1].ID, runs[1])
	}
}

func TestGetAndCancel(t *testing.T) {
	s := newServer(t, Options{})
	id, err := s.AddRun("develop.yml", "schedule")
	if err != nil {
		t.Fatal(err)
	}
	path := "/repos/o/r/actions/runs/" + strconv.FormatInt(id, 10)
	resp, body := call(t, s, "GET", path, "")
	if resp.StatusCode != 200 || body["path"] != ".github/workflows/develop.yml" || body["status"] != "queued" || body["conclusion"] != nil ||
		body["name"] != "develop" || body["id"] != float64(id) || body["event"] != "schedule" || body["head_branch"] != "main" {
		t.Errorf("run = %d %v", resp.StatusCode, body)
	}
	resp, body = call(t, s, "POST", path+"/cancel", "")
	if resp.StatusCode != 202 || body == nil || len(body) != 0 {
		t.Errorf("cancel = %d %v, want 202 {}", resp.StatusCode, body)
	}
	if _, body := call(t, s, "GET", path, ""); body["status"] != "completed" || body["conclusion"] != "cancelled" {
		t.Errorf("after cancel: %v", body)
	}
	resp, body = call(t, s, "POST", path+"/cancel", "")
	wantError(t, resp, body, 409, "Cannot cancel a workflow run that is completed.")
	for _, p := range []string{"/repos/o/r/actions/runs/1", "/repos/o/r/actions/runs/x"} {
		resp, body = call(t, s, "GET", p, "")
		wantError(t, resp, body, 404, "Not Found")
		resp, body = call(t, s, "POST", p+"/cancel", "")
		wantError(t, resp, body, 404, "Not Found")
	}
}

func TestReadOnlyToken(t *testing.T) {
	s := newServer(t, Options{ReadOnlyToken: "ro"})
	id, _ := s.AddRun("develop.yml", "schedule")
	if resp, _ := call(t, s, "GET", "/repos/o/r/actions/runs", "", "token ro"); resp.StatusCode != 200 {
		t.Errorf("read with the read-only token: %d", resp.StatusCode)
	}
	resp, body := call(t, s, "POST", "/repos/o/r/actions/workflows/develop.yml/dispatches", `{"ref":"main"}`, "token ro")
	wantError(t, resp, body, 403, "Resource not accessible")
	resp, body = call(t, s, "POST", "/repos/o/r/actions/runs/"+strconv.FormatInt(id, 10)+"/cancel", "", "token ro")
	wantError(t, resp, body, 403, "Resource not accessible")
}

// TestJobTokenDispatchesAsTheBot: a dispatch made with a workflow job's GITHUB_TOKEN creates a
// run whose actor and triggering_actor are github-actions[bot], as GitHub records it; the
// operator's token dispatches as its user; the job token is no user (GET /user is 403).
func TestJobTokenDispatchesAsTheBot(t *testing.T) {
	s := newServer(t, Options{Actor: "octo-owner", JobToken: "ghs_job"})
	for _, auth := range []string{"Bearer " + tok, "token ghs_job"} {
		req, err := http.NewRequest("POST", strings.TrimSuffix(s.URL, "/")+"/repos/o/r/actions/workflows/develop.yml/dispatches", strings.NewReader(`{"ref":"main","inputs":{"ISSUE":"1"}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", auth)
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 204 {
			t.Fatalf("dispatch with %q: %d", auth, resp.StatusCode)
		}
	}
	runs := s.Runs()
	if len(runs) != 2 || runs[0].Actor != "octo-owner" || runs[1].Actor != BotLogin {
		t.Fatalf("runs %+v: want the operator's dispatch by octo-owner, the job token's by %s", runs, BotLogin)
	}
	for i, want := range []string{"octo-owner", BotLogin} {
		_, body := call(t, s, "GET", "/repos/o/r/actions/runs/"+strconv.FormatInt(runs[i].ID, 10), "", "token ghs_job")
		actor, _ := body["actor"].(map[string]any)
		triggering, _ := body["triggering_actor"].(map[string]any)
		if actor["login"] != want || triggering["login"] != want {
			t.Errorf("run %d: actor %v, triggering_actor %v, want %s", i, body["actor"], body["triggering_actor"], want)
		}
	}
	resp, body := call(t, s, "GET", "/user", "", "token ghs_job")
	wantError(t, resp, body, 403, "Resource not accessible by integration")
	if _, body := call(t, s, "GET", "/user", ""); body["login"] != "octo-owner" {
		t.Errorf("GET /user with the operator's token: %v", body)
	}
}

func TestListPaginationAndFilters(t *testing.T) {
	clock := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	s := newServer(t, Options{Now: now})
	var ids []int64
	for i := range 65 {
		id, err := s.AddRun("develop.yml", "workflow_dispatch")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		if i == 0 {
			mu.Lock()
			clock = clock.Add(time.Hour) // the first run is an hour older than the rest
			mu.Unlock()
		}
	}
	if err := s.Start(ids[1]); err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ids[2], "failure"); err != nil {
		t.Fatal(err)
	}

	resp, body := call(t, s, "GET", "/repos/o/r/actions/workflows/develop.yml/runs?event=workflow_dispatch", "")
	runs, _ := body["workflow_runs"].([]any)
	if resp.StatusCode != 200 || body["total_count"] != float64(65) || len(runs) != 30 {
		t.Fatalf("page 1: %d total_count=%v, %d runs; want 65 and 30 per page", resp.StatusCode, body["total_count"], len(runs))
	}
	if first := runs[0].(map[string]any)["id"]; first != float64(ids[64]) {
		t.Errorf("first listed run %v, want the newest %d", first, ids[64])
	}
	base := strings.TrimSuffix(s.URL, "/") + "/repos/o/r/actions/workflows/develop.yml/runs?event=workflow_dispatch&page="
	if got, want := resp.Header.Get("Link"), `<`+base+`2>; rel="next", <`+base+`3>; rel="last"`; got != want {
		t.Errorf("Link = %s\nwant   %s", got, want)
	}
	resp, _ = call(t, s, "GET", "/repos/o/r/actions/workflows/develop.yml/runs?event=workflow_dispatch&page=2", "")
	if got, want := resp.Header.Get("Link"), `<`+base+`1>; rel="prev", <`+base+`3>; rel="next", <`+base+`3>; rel="last", <`+base+`1>; rel="first"`; got != want {
		t.Errorf("Link = %s\nwant   %s", got, want)
	}
	resp, body = call(t, s, "GET", "/repos/o/r/actions/workflows/develop.yml/runs?event=workflow_dispatch&page=3", "")
	if runs, _ := body["workflow_runs"].([]any); len(runs) != 5 || runs[4].(map[string]any)["id"] != float64(ids[0]) {
		t.Errorf("last page has %d runs, ending with the oldest?", len(runs))
	}
	if got, want := resp.Header.Get("Link"), `<`+base+`2>; rel="prev", <`+base+`1>; rel="first"`; got != want {
		t.Errorf("Link = %s\nwant   %s", got, want)
	}
	if _, body = call(t, s, "GET", "/repos/o/r/actions/runs?per_page=500", ""); len(body["workflow_runs"].([]any)) != 65 {
		t.Errorf("per_page=500 gave %d runs; want all 65 (capped at 100)", len(body["workflow_runs"].([]any)))
	}
	if resp, _ = call(t, s, "GET", "/repos/o/r/actions/runs?per_page=100", ""); resp.Header.Get("Link") != "" {
		t.Errorf("a single page has a Link header: %s", resp.Header.Get("Link"))
	}

	count := func(query string) float64 {
		t.Helper()
		resp, body := call(t, s, "GET", "/repos/o/r/actions/runs?"+query, "")
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", query, resp.StatusCode, body)
		}
		return body["total_count"].(float64)
	}
	for query, want := range map[string]float64{
		"status=queued": 63, "status=in_progress": 1, "status=completed": 1, "status=failure": 1, "status=success": 0,
		"event=schedule": 0, "branch=main": 65, "branch=dev": 0,
		"created=%3E%3D2026-05-01T12:30:00Z": 64, "created=%3C2026-05-01T12:30:00Z": 1, "created=2026-05-01": 65,
		"created=2026-05-01T12:30:00Z..*": 64,
	} {
		if got := count(query); got != want {
			t.Errorf("%s: total_count %v, want %v", query, got, want)
		}
	}
	resp, body = call(t, s, "GET", "/repos/o/r/actions/runs?status=bogus", "")
	wantError(t, resp, body, 422, "not a valid status")
	resp, body = call(t, s, "GET", "/repos/o/r/actions/runs?created=yesterday", "")
	wantError(t, resp, body, 422, "created")
}

func TestVisibilityAndCancelDelay(t *testing.T) {
	clock := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	tick := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	s := newServer(t, Options{Now: now, Visibility: time.Second, VisibleAfterLists: 2, CancelDelay: time.Minute})
	if resp, _ := dispatch(t, s, "develop.yml", `{"ref":"main"}`); resp.StatusCode != 204 {
		t.Fatal(resp.StatusCode)
	}
	id := s.Runs()[0].ID
	path := "/repos/o/r/actions/runs/" + strconv.FormatInt(id, 10)
	listed := func() float64 {
		_, body := call(t, s, "GET", "/repos/o/r/actions/runs", "")
		return body["total_count"].(float64)
	}
	for i := range 2 {
		if listed() != 0 {
			t.Fatalf("the run was listed by list call %d, before VisibleAfterLists", i+1)
		}
	}
	if listed() != 0 {
		t.Fatal("the run was listed before its visibility delay passed")
	}
	if resp, _ := call(t, s, "GET", path, ""); resp.StatusCode != 404 {
		t.Errorf("an invisible run: %d", resp.StatusCode)
	}
	tick(time.Second)
	if listed() != 1 || s.Runs()[0].Visible != true {
		t.Fatal("the run did not appear")
	}
	if resp, _ := call(t, s, "POST", path+"/cancel", ""); resp.StatusCode != 202 {
		t.Fatal(resp.StatusCode)
	}
	if _, body := call(t, s, "GET", path, ""); body["status"] != "queued" {
		t.Errorf("a cancel took effect before its delay: %v", body["status"])
	}
	tick(time.Minute)
	if _, body := call(t, s, "GET", path, ""); body["status"] != "completed" || body["conclusion"] != "cancelled" {
		t.Errorf("after the delay: %v/%v", body["status"], body["conclusion"])
	}
}

func TestRateLimitInjection(t *testing.T) {
	clock := time.Date(2026, 5, 1, 12, 0, 0, 250_000_000, time.UTC)
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	tick := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	s := newServer(t, Options{Now: now})

	s.RateLimitNext(1, Primary, time.Second)
	resp, body := call(t, s, "GET", "/repos/o/r", "")
	wantError(t, resp, body, 403, "API rate limit exceeded")
	reset := clock.Truncate(time.Second).Add(2 * time.Second).Unix() // whole seconds, at least the wait
	if resp.Header.Get("X-RateLimit-Remaining") != "0" || resp.Header.Get("X-RateLimit-Reset") != strconv.FormatInt(reset, 10) {
		t.Errorf("primary headers: %v", resp.Header)
	}
	tick(time.Second)
	if resp, _ := call(t, s, "GET", "/repos/o/r", ""); resp.StatusCode != 403 {
		t.Errorf("a request before the reset: %d, want still refused", resp.StatusCode)
	}
	tick(time.Second)
	if resp, _ := call(t, s, "GET", "/repos/o/r", ""); resp.StatusCode != 200 || resp.Header.Get("X-RateLimit-Remaining") == "0" {
		t.Errorf("after the reset: %d", resp.StatusCode)
	}

	s.RateLimitNext(1, Secondary, 2*time.Second)
	resp, body = call(t, s, "GET", "/repos/o/r", "")
	wantError(t, resp, body, 403, "secondary rate limit")
	if resp.Header.Get("Retry-After") != "2" || !strings.HasSuffix(body["documentation_url"].(string), "secondary-rate-limits") {
		t.Errorf("secondary: Retry-After %q, %v", resp.Header.Get("Retry-After"), body)
	}
	tick(2 * time.Second)

	s.RateLimitNext(2, TooManyRequests, time.Second)
	resp, body = call(t, s, "GET", "/repos/o/r", "")
	wantError(t, resp, body, 429, "secondary rate limit")
	if resp.Header.Get("Retry-After") != "1" {
		t.Errorf("429: Retry-After %q", resp.Header.Get("Retry-After"))
	}
	tick(time.Second)
	if resp, _ := call(t, s, "GET", "/repos/o/r", ""); resp.StatusCode != 429 {
		t.Errorf("the second injected limit: %d", resp.StatusCode)
	}
	tick(time.Second)
	if resp, _ := call(t, s, "GET", "/repos/o/r", ""); resp.StatusCode != 200 {
		t.Errorf("after both limits: %d", resp.StatusCode)
	}
	var codes []int
	for _, q := range s.Requests() {
		codes = append(codes, q.Status)
	}
	if want := []int{403, 403, 200, 403, 429, 429, 200}; !slices.Equal(codes, want) {
		t.Errorf("request log statuses %v, want %v", codes, want)
	}
}

func TestWorkflowsFromCompiledFiles(t *testing.T) {
	dir := filepath.Join("..", "..", "golden", "sdlc", "gh-actions")
	files := map[string][]byte{"README.md": []byte("not a workflow"), ".github/workflows/notes.txt": []byte("::")}
	paths, err := filepath.Glob(filepath.Join(dir, ".github", "workflows", "*.yml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden workflows: %v", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[".github/workflows/"+filepath.Base(p)] = data
	}
	wfs, err := WorkflowsFromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(wfs) != len(paths) {
		t.Errorf("%d workflows from %d files", len(wfs), len(paths))
	}
	dev := wfs["develop.yml"]
	if dev.Name != "develop" || !dev.Dispatch || !slices.Equal(dev.Inputs, []string{"ISSUE", CorrelationInput}) || dev.RunName != "develop [{0}]" {
		t.Errorf("develop.yml = %+v", dev)
	}
	if m := wfs["maintainer.yml"]; !slices.Equal(m.Inputs, []string{"ITEM", "ASK", CorrelationInput}) {
		t.Errorf("maintainer.yml inputs = %v", m.Inputs)
	}
	// pm may launch any actor, itself included: every workflow of the fleet is dispatchable.
	if pm := wfs["pm.yml"]; !pm.Dispatch || !slices.Equal(pm.Inputs, []string{CorrelationInput}) {
		t.Errorf("pm.yml = %+v; it is dispatched with the correlation input only", pm)
	}
	if x, err := WorkflowsFromFiles(map[string][]byte{".github/workflows/x.yml": []byte("on:\n  schedule:\n    - cron: '0 9 * * 1'\n")}); err != nil || x["x.yml"].Dispatch || x["x.yml"].Inputs != nil || x["x.yml"].RunName != "" {
		t.Errorf("a scheduled workflow: %+v, %v; it has no dispatch", x, err)
	}
	for _, src := range []string{"on: workflow_dispatch\n", "on: [push, workflow_dispatch]\n", "on:\n  workflow_dispatch:\n"} {
		wfs, err := WorkflowsFromFiles(map[string][]byte{".github/workflows/x.yaml": []byte(src)})
		if err != nil || !wfs["x.yaml"].Dispatch || wfs["x.yaml"].Name != "x" {
			t.Errorf("%q: %+v, %v", src, wfs, err)
		}
	}
	if _, err := WorkflowsFromFiles(map[string][]byte{".github/workflows/bad.yml": []byte("on: [")}); err == nil || !regexp.MustCompile(`bad\.yml`).MatchString(err.Error()) {
		t.Errorf("a bad workflow: %v", err)
	}
}

func TestNewChecksOptions(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("New without a token succeeded")
	}
	if _, err := New(Options{Token: "t", Workflows: map[string]Workflow{".github/workflows/x.yml": {}}}); err == nil {
		t.Error("New with a workflow path instead of a file name succeeded")
	}
	for _, err := range []error{
		newServer(t, Options{}).SetStatus(1, "queued"),
		newServer(t, Options{}).Complete(1, "success"),
	} {
		if err == nil {
			t.Error("driving an unknown run succeeded")
		}
	}
	s := newServer(t, Options{})
	id, _ := s.AddRun("develop.yml", "schedule")
	if s.SetStatus(id, "completed") == nil || s.Complete(id, "bogus") == nil {
		t.Error("a bad status or conclusion was accepted")
	}
	if err := s.Complete(id, "success"); err != nil {
		t.Fatal(err)
	}
	if s.Start(id) == nil {
		t.Error("a completed run was started again")
	}
	if _, err := s.AddRun("nosuch.yml", "push"); err == nil {
		t.Error("AddRun of an unknown workflow succeeded")
	}
}
