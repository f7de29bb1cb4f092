//go:build unix

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/autonomyhq/autonomy/conformance"
	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
)

// TestConformanceGitHubProcess: `autonomy conformance --substrate gh-actions --repo` against a
// fake GitHub passes every core check of both GitHub targets but the cron's (GitHub's clock is
// its own: not probed), and its get check (a second
// autonomy process reading the session back) returns the params, on a server that names the run
// and on one answering 204; its scope-refused check runs the apply job (this binary again) on a
// session's launches, its session-sources check observes a session's launch, dispatched
// with the job token (AUTONOMY_PROBE_JOB_TOKEN) as github-actions[bot], reach the probe with
// the calling actor and NONE, and its merge-boundary check plays the proposer's and the
// reviewer's runs (this binary again) over a git repository the fake serves pull requests over.
func TestConformanceGitHubProcess(t *testing.T) {
	t.Parallel()
	prof, out, err := conformance.CompileProbeFleet(ghactions.Substrate{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wfs, err := ghfake.WorkflowsFromOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, noContent := range []bool{false, true} {
		origin := installedRepo(t, out)
		srv, err := ghfake.New(ghfake.Options{Token: "t", JobToken: "ghs_job", Workflows: wfs, DispatchNoContent: noContent, GitDir: origin, Collaborators: map[string]string{"ada": "admin"}, AutoMergeMerges: true})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), cliEnv + "=1", "GITHUB_API_URL=" + srv.URL, "GITHUB_TOKEN=t", "AUTONOMY_REMOTE=" + origin, ghactions.JobTokenEnv + "=ghs_job"}
		// The maintainer provisions the repository: main protected, auto-merge allowed.
		if _, stderr, code := ghCLI(t, t.TempDir(), env, "provision", prof, "--repo", "o/r"); code != 0 {
			t.Fatalf("provision: exit %d\n%s", code, stderr)
		}
		stdout, stderr, code := ghCLI(t, t.TempDir(), env, "conformance", "--target", "gh-actions", "--repo", "o/r", "--format", "json")
		var rep conformance.Report
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("204=%v: exit %d: %v\n%s", noContent, code, err, stderr)
		}
		got, reasons := map[string]conformance.Outcome{}, map[string]string{}
		core := map[string]int{}
		for _, r := range rep.Results {
			got[r.Target+" "+r.Check], reasons[r.Target+" "+r.Check] = r.Outcome, r.Reason
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
		// A proposer's change merges only on its reviewer's approval: its runs are played with
		// this binary as the trusted jobs' autonomy, pushing to AUTONOMY_REMOTE.
		if r := got["github merge-boundary"]; r != conformance.Supported {
			t.Errorf("204=%v: github merge-boundary: %s %s", noContent, r, reasons["github merge-boundary"])
		}
		if core["github"] != 7 || core["github human"] != 6 || code != 0 {
			t.Errorf("204=%v: exit %d, core checks run %v\n%s", noContent, code, core, stderr)
		}
	}
}

// installedRepo is a bare git repository whose main holds out installed, as a repository the
// probe fleet was compiled into and pushed to.
func installedRepo(t *testing.T, out substrates.Output) string {
	t.Helper()
	root := t.TempDir()
	origin, seed := filepath.Join(root, "origin.git"), filepath.Join(root, "seed")
	if err := os.Mkdir(seed, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := substrates.Write(seed, &out, substrates.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=m", "GIT_AUTHOR_EMAIL=m@example.com", "GIT_COMMITTER_NAME=m", "GIT_COMMITTER_EMAIL=m@example.com")
	for _, c := range []struct {
		dir  string
		args []string
	}{{root, []string{"init", "--quiet", "--bare", "--initial-branch=main", origin}}, {seed, []string{"init", "--quiet", "--initial-branch=main"}},
		{seed, []string{"add", "-A"}}, {seed, []string{"commit", "--quiet", "-m", "install the probe fleet"}}, {seed, []string{"push", "--quiet", origin, "HEAD:main"}}} {
		cmd := exec.Command("git", c.args...)
		cmd.Dir, cmd.Env = c.dir, env
		if got, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", c.args, err, got)
		}
	}
	return origin
}
