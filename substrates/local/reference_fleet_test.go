//go:build unix

package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// referenceFleet reads substrates/testdata/self-driving (the reference's self-driving shape, in
// our own words) with codeHost: local-git.
func referenceFleet(t *testing.T) fleet {
	t.Helper()
	root := "../testdata/self-driving"
	f := fleet{files: map[string]string{}}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == "ir.yml" {
			// This package's tests know the local substrate only: the profile targets it alone.
			y := strings.Replace(string(data), "codeHost: github", "codeHost: local-git", 1)
			y = strings.Replace(y, "targets: [gh-actions, local]", "targets: [local]", 1)
			f.yml = y
		} else {
			f.files[filepath.ToSlash(rel)] = string(data)
		}
		return nil
	})
	if err != nil || !strings.Contains(f.yml, "codeHost: local-git") {
		t.Fatalf("reading the profile: %v", err)
	}
	return f
}

// modelRouter is the upstream every session's model proxy forwards to: it hands each request to
// the scripted model of the actor whose skill the request carries (each skill's description is
// its own), so that each actor plays its own script; the reviewer's is made when it first
// speaks, as its verdict names the head it reviews.
type modelRouter struct {
	mu     sync.Mutex
	fakes  map[string]*modelfake.Server
	late   func() *modelfake.Server
	server *httptest.Server
}

var skillMarks = map[string]string{
	"pm":       "Picks the next ready work item",
	"develop":  "Implements one work item",
	"reviewer": "Judges one proposed change",
}

func (m *modelRouter) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	actor := "develop" // a request of no conversation (a probe): any script answers it
	for a, mark := range skillMarks {
		if bytes.Contains(body, []byte(mark)) {
			actor = a
		}
	}
	m.mu.Lock()
	fake := m.fakes[actor]
	if fake == nil && actor == "reviewer" {
		fake = m.late()
		m.fakes[actor] = fake
	}
	m.mu.Unlock()
	u, _ := url.Parse(strings.TrimSuffix(fake.OpenAIBaseURL(), "/v1"))
	httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, req)
}

// TestReferenceFleetRuns, the local half (codeHost: local-git): the PM (the real pinned codex),
// fired by the schedule, launches develop with autonomy runner launch from its shell; develop (the real pinned codex against the
// scripted model) commits in its worktree; the runner proposes its branch, launches the
// reviewer on it, and merges it into main after the reviewer's approval of that head. A second
// run whose verdict names a stale head merges nothing. (The gh-actions half is
// substrates/ghactions/effect's TestReferenceFleetRuns.)
func TestReferenceFleetRuns(t *testing.T) {
	codex := agentclitest.Require(t, "codex")
	dir := installFleet(t, referenceFleet(t), true)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-qm", "install the fleet")
	ctx := context.Background()

	var r *Runner
	staleHead := false
	router := &modelRouter{}
	router.server = httptest.NewServer(router)
	defer router.server.Close()
	// The PM's shell runs the autonomy on its session's PATH, as a skill does.
	router.fakes = map[string]*modelfake.Server{
		"pm": modelfake.Start(modelfake.Turn{Shell: "autonomy runner launch develop --ref 1"}, finalResult("Launched develop on 1.")),
		"develop": modelfake.Start(
			modelfake.Turn{Shell: "echo hello from $ISSUE > greeting.txt && git add greeting.txt && git -c user.name=develop -c user.email=d@example.com commit -q -m 'Greet the user'"},
			finalResult("Committed the greeting.")),
	}
	router.late = func() *modelfake.Server {
		open, _ := r.Store.Proposals(ctx, false, 1)
		head := ""
		if len(open) == 1 {
			head = open[0].Head
		}
		if staleHead {
			head = strings.Repeat("0", 40)
		}
		verdict, _ := json.Marshal(map[string]any{"verdict": "approve", "summary": "Small and clear.", "headSha": head})
		return modelfake.Start(modelfake.Turn{JSON: verdict})
	}
	defer func() {
		for _, f := range router.fakes {
			f.Close()
		}
	}()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := append(operatorEnv(filepath.Dir(codex)+string(os.PathListSeparator)+os.Getenv("PATH")),
		"HOME="+home, "CODEX_HOME="+filepath.Join(home, ".codex"), "TMPDIR="+os.TempDir(), "OPENAI_BASE_URL="+router.server.URL+"/v1")
	c := &clock{}
	r = newRunner(t, dir, Options{Env: env, Exe: builtAutonomy(t), Now: c.Now, Detach: true})
	// Deferred after the model's: the fleet is stopped while its model still answers, and before
	// its HOME is removed.
	defer stopFleet(t, r, "HOME="+home)

	before := gitRun(t, dir, "rev-parse", "main")
	c.Set("2026-03-02T06:59:00Z")
	if _, err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	c.Set("2026-03-02T07:00:00Z")
	rep, err := r.Tick(ctx)
	if err != nil || fired(rep) != "pm" {
		t.Fatalf("the schedule fired %q: %v", fired(rep), err)
	}
	p := waitProposal(t, r, func(p store.Proposal) bool {
		return p.State == store.ProposalMerged || p.State == store.ProposalRefused
	})
	if p.State != store.ProposalMerged || p.Actor != "develop" {
		t.Fatalf("the proposal: %+v\npm's log:\n%s", p, sessionLogOf(r, rep.Fired[0].ID))
	}
	main := gitRun(t, dir, "rev-parse", "main")
	if main != p.Head || gitRun(t, dir, "merge-base", "--is-ancestor", before, main) != "" {
		t.Fatalf("main is %s, want the proposal's head %s", main, p.Head)
	}
	if got := readFile(t, filepath.Join(dir, "greeting.txt")); got != "hello from 1\n" {
		t.Fatalf("main's checkout holds %q", got)
	}
	dev, _, _ := r.Store.Get(ctx, p.Session)
	if dev.Ref != "1" || dev.Origin != "session:"+rep.Fired[0].ID {
		t.Errorf("develop was launched %q by %q, want by the PM's session", dev.Ref, dev.Origin)
	}
	// Its supervisor was started by the PM's, outside the PM's sandbox (adopt.go).
	evs, _ := r.Store.Events(ctx, dev.ID, 0)
	adopted := false
	for _, e := range evs {
		adopted = adopted || e.Kind == "adopted"
	}
	if !adopted {
		t.Errorf("develop's events: %+v, want adopted", evs)
	}

	// A second run: develop proposes again, and the reviewer's verdict names another head.
	staleHead = true
	router.mu.Lock()
	delete(router.fakes, "reviewer")
	router.mu.Unlock()
	second := launch(t, r, LaunchRequest{Actor: "develop", Ref: "2"})
	if s := waitEndedWithin(t, r, second.ID, 150); s.Status != ir.Done {
		t.Fatalf("the second develop: %s %s\n%s", s.Status, s.Reason, sessionLogOf(r, second.ID))
	}
	p2 := waitProposal(t, r, func(q store.Proposal) bool {
		return q.Session == second.ID && (q.State == store.ProposalMerged || q.State == store.ProposalRefused)
	})
	if p2.State != store.ProposalRefused || !strings.Contains(p2.Reason, "stale verdict") {
		t.Fatalf("the second proposal: %+v", p2)
	}
	if got := gitRun(t, dir, "rev-parse", "main"); got != main {
		t.Fatalf("a stale verdict moved main to %s", got)
	}
}

// stopFleet cancels whatever runner r's fleet still runs, and waits until every session has
// ended and every supervisor has exited; then no process started with marker (NAME=value, set in
// the runner's environment) may be left. A test that ends with its proposal settled may not end
// before its sessions: the code flow fires the reviewer's pull_request_target trigger on each
// proposal opened (origin event), a second reviewer nobody waits for, and a reviewer launched
// twice for one proposal is cancelled while it starts; their detached supervisors, and the
// agents under them, would go on writing into the test's folders after it removed them.
func stopFleet(t *testing.T, r *Runner, marker string) {
	t.Helper()
	ctx := context.Background()
	stopped := map[string]bool{}
	for round := 0; ; round++ {
		ss, err := r.Store.List(ctx, store.ListOptions{All: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(stopped) == len(ss) || round == 10 {
			break // none started while the others were stopped
		}
		for _, s := range ss {
			if !stopped[s.ID] {
				stopped[s.ID] = true
				stopSession(t, r, s.ID)
			}
		}
	}
	if err := fleetGone(r, marker); err != nil {
		t.Error(err)
	}
}

// fleetGone is an error naming what is left of runner r's fleet: a session not ended, a
// supervisor not exited, a process started with marker.
func fleetGone(r *Runner, marker string) error {
	ss, err := r.Store.List(context.Background(), store.ListOptions{All: true})
	if err != nil {
		return err
	}
	var left []string
	for _, s := range ss {
		if !s.Status.Ended() {
			left = append(left, "session "+s.ID+" "+string(s.Status))
		}
		if s.SupervisorPID > 0 && proc.Alive(s.SupervisorPID, s.SupervisorStart) {
			left = append(left, fmt.Sprintf("the supervisor %d of %s", s.SupervisorPID, s.ID))
		}
	}
	if groups := proc.GroupsWithEnv(marker); len(groups) > 0 {
		left = append(left, fmt.Sprintf("process groups %v started with %s", groups, marker))
	}
	if len(left) > 0 {
		return fmt.Errorf("the fleet outlived the test: %s", strings.Join(left, "; "))
	}
	return nil
}

// stopSession cancels session id unless it ended, and waits until it has and its supervisor
// exited: the supervisor ends a session once its agent's group and whatever escaped it are
// killed, and exits after; a cancel ends it at once, its supervisor stopping it then.
func stopSession(t *testing.T, r *Runner, id string) {
	t.Helper()
	if _, err := r.Cancel(context.Background(), id); err != nil {
		t.Errorf("cancel %s: %v", id, err)
	}
	s := waitEndedWithin(t, r, id, 60)
	for i := 0; s.SupervisorPID > 0 && proc.Alive(s.SupervisorPID, s.SupervisorStart); i++ {
		if i == 600 {
			t.Fatalf("the supervisor %d of %s (%s) did not exit", s.SupervisorPID, id, s.Status)
		}
		waitTick()
	}
}

// waitProposal waits until the newest proposal satisfies done, and returns it.
func waitProposal(t *testing.T, r *Runner, done func(store.Proposal) bool) store.Proposal {
	t.Helper()
	var last store.Proposal
	for i := 0; i < 1500; i++ {
		ps, err := r.Store.Proposals(context.Background(), true, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 1 {
			last = ps[0]
			if done(last) {
				return last
			}
		}
		if i%50 == 0 {
			_, _ = r.Tick(context.Background())
		}
		waitTick()
	}
	ss, _ := r.Store.List(context.Background(), store.ListOptions{All: true})
	var dump strings.Builder
	for _, s := range ss {
		dump.WriteString(s.ID + " " + s.Actor + " " + string(s.Status) + " " + s.Reason + "\n" + sessionLogOf(r, s.ID) + "\n")
		evs, _ := r.Store.Events(context.Background(), s.ID, 20)
		for _, e := range evs {
			dump.WriteString("  event " + e.Kind + ": " + e.Message + "\n")
		}
	}
	t.Fatalf("no proposal settled; the last: %+v\n%s", last, dump.String())
	return last
}

func waitTick() { <-time.After(100 * time.Millisecond) }
