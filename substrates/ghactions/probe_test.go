package ghactions_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/conformance"
	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
)

// fakeGitHub serves the probe fleet's compiled workflows from an in-process GitHub API.
func fakeGitHub(t *testing.T) (*ghfake.Server, ghrun.RunnerOptions, substrates.Output) {
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
		Actors: conformance.ProbeActors, PollInterval: 5 * time.Millisecond, FindTimeout: 10 * time.Second}, out
}

// TestGitHubRunnerConforms runs the conformance battery against the GitHub runner (its ProbeSubject) and the simulated API: every
// core check passes but the cron's, whose clock is GitHub's; what GitHub cannot do is reported
// unsupported, what the API cannot show not probed.
func TestGitHubRunnerConforms(t *testing.T) {
	_, opts, out := fakeGitHub(t)
	targets := []conformance.Target{
		{Name: "github", Substrate: ghactions.Name, New: func(ctx context.Context) (*conformance.Subject, error) {
			return ghactions.ProbeSubject(opts, false, out)
		}},
		{Name: "github human", Substrate: ghactions.Name, New: func(ctx context.Context) (*conformance.Subject, error) {
			return ghactions.ProbeSubject(opts, true, out)
		}},
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
		"github params-env":                 conformance.Supported,
		"github param-sources":              conformance.Supported,
		"github session-sources":            conformance.NotProbed,
		"github scope-refused":              conformance.NotProbed,
		"github cron-fires":                 conformance.NotProbed,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
}

// TestGitHubParamSources: the GitHub subject's param-sources check reads the agent job's env from
// the workflows as compiled, for the run GitHub reports; a workflow that took subject.actor from
// the dispatcher's input, or gave every dispatcher the owner's role, fails it.
func TestGitHubParamSources(t *testing.T) {
	_, opts, out := fakeGitHub(t)
	forge := func(from, to string) substrates.Output {
		forged := substrates.Output{Files: slices.Clone(out.Files)}
		for i, f := range forged.Files {
			if f.Path == ".github/workflows/probe.yml" {
				if !bytes.Contains(f.Data, []byte(from)) {
					t.Fatalf("probe.yml has no %s", from)
				}
				forged.Files[i].Data = bytes.Replace(f.Data, []byte(from), []byte(to), 1)
			}
		}
		return forged
	}
	actorEnv := "PROBE_ACTOR: ${{ github.actor == 'github-actions[bot]' && inputs.PROBE_ACTOR || github.actor }}"
	roleEnv := "PROBE_ROLE: ${{ endsWith(github.actor, '[bot]') && 'NONE' || github.actor == github.repository_owner && 'OWNER' || 'COLLABORATOR' }}"
	for _, c := range []struct {
		name string
		out  substrates.Output
		want conformance.Outcome
	}{
		{"as compiled", out, conformance.Supported},
		{"actor from the input", forge(actorEnv, "PROBE_ACTOR: ${{ inputs.PROBE_ACTOR || github.actor }}"), conformance.Fail},
		{"kind as written", forge("PROBE_KIND: ${{ inputs.PROBE_KIND || github.event_name }}", "PROBE_KIND: dispatch"), conformance.Fail},
		{"ref dropped", forge("PROBE_REF: ${{ inputs.PROBE_REF }}", "PROBE_REF: ''"), conformance.Fail},
		{"no role", forge(roleEnv, "PROBE_ROLE: ''"), conformance.Fail},
	} {
		target := conformance.Target{Name: "github", Substrate: ghactions.Name, New: func(ctx context.Context) (*conformance.Subject, error) {
			return ghactions.ProbeSubject(opts, false, c.out)
		}}
		for _, r := range conformance.Run(context.Background(), []conformance.Target{target}) {
			if r.Check == "param-sources" && r.Outcome != c.want {
				t.Errorf("%s: param-sources %s %s, want %s", c.name, r.Outcome, r.Reason, c.want)
			}
		}
	}
}

// TestGitHubConcurrentLaunches: two launches at once get the run ids of their own dispatches.
func TestGitHubConcurrentLaunches(t *testing.T) {
	srv, opts, out := fakeGitHub(t)
	s, err := ghactions.ProbeSubject(opts, false, out)
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
