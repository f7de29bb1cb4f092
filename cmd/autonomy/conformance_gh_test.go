//go:build unix

package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/autonomyhq/autonomy/conformance"
	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
)

// TestConformanceGitHubProcess: `autonomy conformance --substrate gh-actions --repo` against a
// fake GitHub passes every core check of both GitHub targets but the cron's (GitHub's clock is
// its own: not probed), and its get check (a second
// autonomy process reading the session back) returns the params, on a server that names the run
// and on one answering 204; its scope-refused check runs the apply job (this binary again) on a
// session's launches, and its session-sources check observes a session's launch, dispatched
// with the job token (AUTONOMY_PROBE_JOB_TOKEN) as github-actions[bot], reach the probe with
// the calling actor and NONE.
func TestConformanceGitHubProcess(t *testing.T) {
	t.Parallel()
	_, out, err := conformance.CompileProbeFleet(ghactions.Substrate{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wfs, err := ghfake.WorkflowsFromOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, noContent := range []bool{false, true} {
		srv, err := ghfake.New(ghfake.Options{Token: "t", JobToken: "ghs_job", Workflows: wfs, DispatchNoContent: noContent})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), cliEnv + "=1", "GITHUB_API_URL=" + srv.URL, "GITHUB_TOKEN=t", ghactions.JobTokenEnv + "=ghs_job"}
		stdout, stderr, code := ghCLI(t, t.TempDir(), env, "conformance", "--target", "gh-actions", "--repo", "o/r", "--format", "json")
		var rep conformance.Report
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("204=%v: exit %d: %v\n%s", noContent, code, err, stderr)
		}
		got := map[string]conformance.Outcome{}
		core := map[string]int{}
		for _, r := range rep.Results {
			got[r.Target+" "+r.Check] = r.Outcome
			if r.Tier == conformance.Core {
				if r.Outcome != conformance.Pass && (r.Check != "cron-fires" || r.Outcome != conformance.NotProbed) {
					t.Errorf("204=%v: %s %s: %s %s", noContent, r.Target, r.Check, r.Outcome, r.Reason)
				}
				core[r.Target]++
			}
			if r.Check == "get" && r.Outcome != conformance.Supported {
				t.Errorf("204=%v: %s get: %s %s", noContent, r.Target, r.Outcome, r.Reason)
			}
		}
		// A session's launch is applied by its run's apply job: this binary, as a third process.
		// With a job token its dispatch is github-actions[bot]'s, as the real apply job's is.
		for _, check := range []string{"scope-refused", "session-sources"} {
			if r := got["github "+check]; r != conformance.Supported {
				t.Errorf("204=%v: github %s: %s", noContent, check, r)
			}
		}
		if core["github"] != 7 || core["github human"] != 6 || code != 0 {
			t.Errorf("204=%v: exit %d, core checks run %v\n%s", noContent, code, core, stderr)
		}
	}
}
