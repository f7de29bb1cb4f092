package ghactions_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
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

// jobToken is the simulated API's workflow job GITHUB_TOKEN: it dispatches as github-actions[bot].
const jobToken = "ghs_job"

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
	srv, err := ghfake.New(ghfake.Options{Token: "t", JobToken: jobToken, Workflows: wfs, VisibleAfterLists: 3})
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

// forge returns out with the first from in actor's workflow replaced by to.
func forge(t *testing.T, out substrates.Output, actor, from, to string) substrates.Output {
	t.Helper()
	forged := substrates.Output{Target: out.Target, Files: slices.Clone(out.Files)}
	for i, f := range forged.Files {
		if f.Path == ".github/workflows/"+actor+".yml" {
			if !bytes.Contains(f.Data, []byte(from)) {
				t.Fatalf("%s.yml has no %s", actor, from)
			}
			forged.Files[i].Data = bytes.Replace(f.Data, []byte(from), []byte(to), 1)
		}
	}
	return forged
}

// checkOn runs the battery against the GitHub subject reading the workflows of out, and returns
// check's result.
func checkOn(opts ghrun.RunnerOptions, out substrates.Output, check string) conformance.Result {
	target := conformance.Target{Name: "github", Substrate: ghactions.Name, New: func(ctx context.Context) (*conformance.Subject, error) {
		return ghactions.ProbeSubject(opts, false, out)
	}}
	for _, r := range conformance.Run(context.Background(), []conformance.Target{target}) {
		if r.Check == check {
			return r
		}
	}
	return conformance.Result{}
}

// TestGitHubParamSources: the GitHub subject's param-sources check reads the agent job's env from
// the workflows as compiled, for the run GitHub reports; a workflow that took subject.actor from
// the dispatcher's input, or gave every dispatcher the owner's role, fails it.
func TestGitHubParamSources(t *testing.T) {
	_, opts, out := fakeGitHub(t)
	actorEnv := "PROBE_ACTOR: ${{ github.actor == 'github-actions[bot]' && inputs.PROBE_ACTOR || github.actor }}"
	roleEnv := "PROBE_ROLE: ${{ endsWith(github.actor, '[bot]') && 'NONE' || github.actor == github.repository_owner && 'OWNER' || 'COLLABORATOR' }}"
	for _, c := range []struct {
		name string
		out  substrates.Output
		want conformance.Outcome
	}{
		{"as compiled", out, conformance.Supported},
		{"actor from the input", forge(t, out, "probe", actorEnv, "PROBE_ACTOR: ${{ inputs.PROBE_ACTOR || github.actor }}"), conformance.Fail},
		{"kind as written", forge(t, out, "probe", "PROBE_KIND: ${{ inputs.PROBE_KIND || github.event_name }}", "PROBE_KIND: dispatch"), conformance.Fail},
		{"ref dropped", forge(t, out, "probe", "PROBE_REF: ${{ inputs.PROBE_REF }}", "PROBE_REF: ''"), conformance.Fail},
		{"no role", forge(t, out, "probe", roleEnv, "PROBE_ROLE: ''"), conformance.Fail},
	} {
		if r := checkOn(opts, c.out, "param-sources"); r.Outcome != c.want {
			t.Errorf("%s: param-sources %s %s, want %s", c.name, r.Outcome, r.Reason, c.want)
		}
	}
}

// TestGitHubCronSchedule: on GitHub the cron check reads the ticker's compiled workflow as GitHub's
// scheduler does: as compiled it observes the schedule and a scheduled firing, and stays not
// probed (GitHub fires it); another cron, a job a schedule event skips, or a firing without
// trigger.kind fails it.
func TestGitHubCronSchedule(t *testing.T) {
	_, opts, out := fakeGitHub(t)
	r := checkOn(opts, out, "cron-fires")
	if r.Outcome != conformance.NotProbed || !strings.Contains(r.Observed, `"17 6 * * *"`) || !strings.Contains(r.Observed, "PROBE_KIND=schedule") {
		t.Errorf("as compiled: cron-fires %s %s, observed %q", r.Outcome, r.Reason, r.Observed)
	}
	for name, forged := range map[string]substrates.Output{
		"another minute":        forge(t, out, "ticker", `cron: "17 6 * * *"`, `cron: "18 6 * * *"`),
		"skipped on a schedule": forge(t, out, "ticker", "if: ${{ vars.AUTONOMY_PAUSED != 'true' }}", "if: ${{ github.event_name != 'schedule' }}"),
		"no trigger.kind":       forge(t, out, "ticker", "PROBE_KIND: ${{ github.event_name }}", "PROBE_KIND: ''"),
	} {
		if r := checkOn(opts, forged, "cron-fires"); r.Outcome != conformance.Fail {
			t.Errorf("%s: cron-fires %s %s, want fail", name, r.Outcome, r.Reason)
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
