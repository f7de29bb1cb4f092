//go:build unix

package ghactions_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/conformance"
	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/internal/testbin"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
)

// codeHost is a repository holding installed (the probe fleet as compiled, perhaps forged) on
// its default branch, a bare git repository the simulated API serves pull requests, statuses and
// branch protection over, provisioned from the probe fleet's profile by autonomy provision (exe):
// main protected, auto-merge allowed. It returns the API's runner options and the git URL.
func codeHost(t *testing.T, exe string, installed substrates.Output) (ghrun.RunnerOptions, string) {
	t.Helper()
	root := t.TempDir()
	prof, _, err := conformance.CompileProbeFleet(ghactions.Substrate{}, root)
	if err != nil {
		t.Fatal(err)
	}
	origin, seed := filepath.Join(root, "origin.git"), filepath.Join(root, "seed")
	if err := os.Mkdir(seed, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := substrates.Write(seed, &installed, substrates.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=m", "GIT_AUTHOR_EMAIL=m@example.com", "GIT_COMMITTER_NAME=m", "GIT_COMMITTER_EMAIL=m@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args, err, out)
		}
	}
	git(root, "init", "--quiet", "--bare", "--initial-branch=main", origin)
	git(seed, "init", "--quiet", "--initial-branch=main")
	git(seed, "add", "-A")
	git(seed, "commit", "--quiet", "-m", "install the probe fleet")
	git(seed, "push", "--quiet", origin, "HEAD:main")
	wfs, err := ghfake.WorkflowsFromOutput(installed)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ghfake.New(ghfake.Options{Token: "t", Workflows: wfs, GitDir: origin, VisibleAfterLists: 3, Collaborators: map[string]string{"ada": "admin"}, AutoMergeMerges: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	prov := exec.Command(exe, "provision", prof, "--repo", "o/r")
	prov.Env = append(os.Environ(), "GH_TOKEN=t", "GITHUB_API_URL="+srv.URL)
	if out, err := prov.CombinedOutput(); err != nil {
		t.Fatalf("provision: %v\n%s", err, out)
	}
	return ghrun.RunnerOptions{Repo: "o/r", Token: "t", BaseURL: srv.URL, HTTPClient: srv.Client(),
		Actors: conformance.ProbeActors, PollInterval: 5 * time.Millisecond, FindTimeout: 10 * time.Second}, origin
}

// mergeOn runs the battery's merge-boundary check against the GitHub subject whose proposer's
// runs it plays from the workflows of out, on a repository holding installed.
func mergeOn(t *testing.T, exe string, out, installed substrates.Output) conformance.Result {
	t.Helper()
	opts, origin := codeHost(t, exe, installed)
	target := conformance.Target{Name: "github", Substrate: ghactions.Name, New: func(ctx context.Context) (*conformance.Subject, error) {
		s, err := ghactions.ProbeSubject(opts, false, out)
		if err == nil {
			err = ghactions.ProbeMerge(s, opts, out, exe, origin)
		}
		return s, err
	}}
	for _, r := range conformance.Run(context.Background(), []conformance.Target{target}) {
		if r.Check == "merge-boundary" {
			return r
		}
	}
	return conformance.Result{}
}

// TestGitHubMergeBoundary: on GitHub a proposer's change lands through its run's trusted propose
// job (a pull request, auto-merge armed), its reviewer's trusted review job (agent-review on the
// head) and the control workflow's human gate, each played from the workflow as compiled with
// this autonomy, against the simulated API over a git repository that autonomy provision
// protected. The check observes the approved change mergeable by the reviewer's verdict, the
// rejected one refused, and the approved change to a human-required path waiting for a person.
// An export step that turns the reviewer's rejection into an approval, an installation that
// drops the human-required paths, a reviewer whose verdict never reaches its review job, and a
// propose job whose auto-merge cannot be armed (so the approved change never merges) fail it.
func TestGitHubMergeBoundary(t *testing.T) {
	_, _, out := fakeGitHub(t)
	exe := testbin.Path(t)
	r := mergeOn(t, exe, out, out)
	if r.Outcome != conformance.Supported || !strings.Contains(r.Observed, "reviewer reviewer") || !strings.Contains(r.Observed, "merged by github-actions[bot]") || !strings.Contains(r.Observed, "agent-review failure") || !strings.Contains(r.Observed, "human-approval pending") {
		t.Fatalf("as compiled: merge-boundary %s %s, observed %s", r.Outcome, r.Reason, r.Observed)
	}
	noHumanPaths := forgeFile(t, out, ".autonomy/human-required-paths.json", `"probe/human.md"`, ``)
	approving := forge(t, out, "reviewer", `cp "$RUNNER_TEMP/autonomy-result.json" "$out/verdict.json"`, `sed s/request-changes/approve/ "$RUNNER_TEMP/autonomy-result.json" > "$out/verdict.json"`)
	silent := forge(t, out, "reviewer", `cp "$RUNNER_TEMP/autonomy-result.json" "$out/verdict.json"`, `true`)
	for name, c := range map[string]struct {
		out, installed substrates.Output
		want           string
	}{
		"the export turns a rejection into an approval": {approving, out, `a change to a plain path its reviewer answered reject is "merged", want refused`},
		"no human-required paths installed":             {noHumanPaths, noHumanPaths, `a change to a human path its reviewer answered approve is "merged", want waiting`},
		"the verdict is not exported":                   {silent, out, "reviewer.yml: jobs.review"},
		"auto-merge is not armed": {forge(t, out, "proposer", `"$AUTONOMY_BIN" gh propose`, `GITHUB_GRAPHQL_URL=http://127.0.0.1:1/graphql "$AUTONOMY_BIN" gh propose`), out,
			`a change to a plain path its reviewer answered approve is "waiting", want merged`},
	} {
		t.Run(name, func(t *testing.T) {
			r := mergeOn(t, exe, c.out, c.installed)
			if r.Outcome != conformance.Fail || !strings.Contains(r.Reason, c.want) {
				t.Errorf("merge-boundary %s %q, want fail saying %q", r.Outcome, r.Reason, c.want)
			}
		})
	}
}

// forgeFile returns out with the first from in the file at path replaced by to.
func forgeFile(t *testing.T, out substrates.Output, path, from, to string) substrates.Output {
	t.Helper()
	forged := substrates.Output{Target: out.Target}
	found := false
	for _, f := range out.Files {
		if f.Path == path && strings.Contains(string(f.Data), from) {
			f.Data, found = []byte(strings.Replace(string(f.Data), from, to, 1)), true
		}
		forged.Files = append(forged.Files, f)
	}
	if !found {
		t.Fatalf("%s has no %s", path, from)
	}
	return forged
}

// TestGitHubMergeNeedsRemote: without AUTONOMY_REMOTE the GitHub target's merge-boundary check is
// not probed, saying to set it, and the other checks' reasons stay theirs.
func TestGitHubMergeNeedsRemote(t *testing.T) {
	srv, _, _ := fakeGitHub(t)
	t.Setenv("AUTONOMY_REMOTE", "")
	t.Setenv("GITHUB_TOKEN", "t")
	t.Setenv("GITHUB_API_URL", srv.URL)
	env := conformance.ProbeEnv(ghactions.Substrate{}, "o/r", testbin.Path(t))
	targets, err := ghactions.Substrate{}.ProbeTargets(env)
	if err != nil {
		t.Fatal(err)
	}
	s, err := targets[0].New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Proposal != nil || !strings.Contains(s.MergeNotProbed, "set AUTONOMY_REMOTE") || strings.Contains(s.NotProbed, "AUTONOMY_REMOTE") {
		t.Errorf("merge-boundary without AUTONOMY_REMOTE: proposal hook %v, %q; NotProbed %q", s.Proposal != nil, s.MergeNotProbed, s.NotProbed)
	}
}
