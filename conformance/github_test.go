package conformance

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
)

// fakeGitHub serves the probe fleet's compiled workflows from an in-process GitHub API.
func fakeGitHub(t *testing.T) (*ghfake.Server, ghrun.RunnerOptions) {
	t.Helper()
	_, out, err := CompileProbeFleet(ghactions.Substrate{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wfs, err := ghfake.WorkflowsFromOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ghfake.New(ghfake.Options{Token: "t", Workflows: wfs, VisibleAfterLists: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv, ghrun.RunnerOptions{Repo: "o/r", Token: "t", BaseURL: srv.URL, HTTPClient: srv.Client(),
		Actors: ProbeActors, PollInterval: 5 * time.Millisecond, FindTimeout: 10 * time.Second}
}

// TestGitHubRunnerConforms runs the battery against the GitHub runner and the simulated API: every
// core check passes; what GitHub cannot do is reported unsupported, what the API cannot show not
// probed.
func TestGitHubRunnerConforms(t *testing.T) {
	_, opts := fakeGitHub(t)
	targets := []Target{
		{Name: "github", Substrate: "gh-actions", New: func(ctx context.Context) (*Subject, error) { return GitHubSubject(opts, false) }},
		{Name: "github human", Substrate: "gh-actions", New: func(ctx context.Context) (*Subject, error) { return GitHubSubject(opts, true) }},
	}
	got := map[string]Outcome{}
	for _, r := range Run(context.Background(), targets) {
		t.Logf("%-12s %-22s %-9s %s %s", r.Target, r.Check, r.Tier, r.Outcome, r.Reason)
		got[r.Target+" "+r.Check] = r.Outcome
		if r.Tier == Core && r.Outcome != Pass {
			t.Errorf("%s %s: %s %s", r.Target, r.Check, r.Outcome, r.Reason)
		}
	}
	want := map[string]Outcome{
		"github get":                        Supported,
		"github pause-resume":               Unsupported,
		"github timeout":                    NotProbed,
		"github human never-done-by-itself": Supported,
		"github human done-by-verified-act": Unsupported,
		"github human distinct-ids":         Pass,
		"github max-concurrent":             NotProbed,
		"github params-env":                 NotProbed,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
}

// TestGitHubConcurrentLaunches: two launches at once get the run ids of their own dispatches.
func TestGitHubConcurrentLaunches(t *testing.T) {
	srv, opts := fakeGitHub(t)
	s, err := GitHubSubject(opts, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	sessions := make([]ir.Session, 2)
	errs := make([]error, 2)
	for i := range sessions {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sessions[i], errs[i] = s.Runner.Launch(context.Background(), "probe", ir.LaunchParams{"PROBE_REF": fmt.Sprint(i), "PROBE_TEXT": "race"})
		}(i)
	}
	wg.Wait()
	for i, sess := range sessions {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		var id int64
		fmt.Sscan(sess.ID, &id)
		run, ok := srv.Run(id)
		if !ok || run.Inputs["PROBE_REF"] != fmt.Sprint(i) {
			t.Errorf("launch %d got run %s, dispatched with %v", i, sess.ID, run.Inputs)
		}
	}
	if sessions[0].ID == sessions[1].ID {
		t.Errorf("both launches got run %s", sessions[0].ID)
	}
}
