package ghactions_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/conformance"
	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
)

// fakeGitHub serves the probe fleet's compiled workflows from an in-process GitHub API.
func fakeGitHub(t *testing.T) (*ghfake.Server, ghrun.RunnerOptions) {
	t.Helper()
	_, out, err := conformance.CompileProbeFleet(ghactions.Substrate{}, t.TempDir())
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
		Actors: conformance.ProbeActors, PollInterval: 5 * time.Millisecond, FindTimeout: 10 * time.Second}
}

// TestGitHubRunnerConforms runs the conformance battery against the GitHub runner (its ProbeSubject) and the simulated API: every
// core check passes but the cron's, whose clock is GitHub's; what GitHub cannot do is reported
// unsupported, what the API cannot show not probed.
func TestGitHubRunnerConforms(t *testing.T) {
	_, opts := fakeGitHub(t)
	targets := []conformance.Target{
		{Name: "github", Substrate: ghactions.Name, New: func(ctx context.Context) (*conformance.Subject, error) { return ghactions.ProbeSubject(opts, false) }},
		{Name: "github human", Substrate: ghactions.Name, New: func(ctx context.Context) (*conformance.Subject, error) { return ghactions.ProbeSubject(opts, true) }},
	}
	got := map[string]conformance.Outcome{}
	for _, r := range conformance.Run(context.Background(), targets) {
		t.Logf("%-12s %-22s %-9s %s %s", r.Target, r.Check, r.Tier, r.Outcome, r.Reason)
		got[r.Target+" "+r.Check] = r.Outcome
		if r.Tier == conformance.Core && r.Outcome != conformance.Pass && r.Check != "cron-fires" {
			t.Errorf("%s %s: %s %s", r.Target, r.Check, r.Outcome, r.Reason)
		}
	}
	want := map[string]conformance.Outcome{
		"github get":                        conformance.Supported,
		"github pause-resume":               conformance.Unsupported,
		"github timeout":                    conformance.NotProbed,
		"github human never-done-by-itself": conformance.Supported,
		"github human done-by-verified-act": conformance.Unsupported,
		"github human distinct-ids":         conformance.Pass,
		"github max-concurrent":             conformance.NotProbed,
		"github params-env":                 conformance.NotProbed,
		"github cron-fires":                 conformance.NotProbed,
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
	s, err := ghactions.ProbeSubject(opts, false)
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
