package ghrun_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
	"github.com/autonomyhq/autonomy/substrates/ghactions/wire"
)

// scopedFleet: watcher may list and cancel develop only; develop and planner are dispatched.
const scopedFleet = head + `  watcher:
    behavior: skills/a
    capabilities: [agent:list@develop, agent:cancel@develop]
    triggers: [{ cron: "0 * * * *" }]
  develop:
    behavior: skills/a
    triggers: [{ dispatch: true, params: { ISSUE: subject.ref } }]
  planner:
    behavior: skills/a
    triggers: [{ dispatch: true }]
`

// jobFleet installs irYML in a checkout (its manifest) and serves its workflows from a fake.
func jobFleet(t *testing.T, irYML string) (string, *ghfake.Server) {
	t.Helper()
	out := compileOK(t, irYML)
	dir := t.TempDir()
	manifest := filepath.Join(dir, filepath.FromSlash(wire.ManifestPath))
	if err := os.MkdirAll(filepath.Dir(manifest), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, []byte(file(t, out, wire.ManifestPath)), 0o644); err != nil {
		t.Fatal(err)
	}
	wfs, err := ghfake.WorkflowsFromOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ghfake.New(ghfake.Options{Token: testToken, Workflows: wfs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return dir, srv
}

func jobRunner(t *testing.T, dir string, srv *ghfake.Server, env map[string]string) (*ghrun.JobRunner, error) {
	t.Helper()
	base := map[string]string{"GITHUB_REPOSITORY": "o/r", "GITHUB_API_URL": srv.URL, "GH_TOKEN": testToken}
	for k, v := range env {
		base[k] = v
	}
	return ghrun.NewJobRunner(ghrun.JobOptions{Dir: dir, Getenv: func(k string) string { return base[k] }, HTTPClient: srv.Client()})
}

// TestJobRunnerScopes: a scoped agent:list sees its actor's sessions only, a scoped
// agent:cancel cancels its actor's only, and no launch is allowed without agent:launch; the
// operator (no actor) may do everything.
func TestJobRunnerScopes(t *testing.T) {
	dir, srv := jobFleet(t, scopedFleet)
	ctx := context.Background()
	op, err := jobRunner(t, dir, srv, nil)
	if err != nil || op.Caller != nil {
		t.Fatalf("operator: %v, caller %+v", err, op.Caller)
	}
	dev, err := op.Launch(ctx, "develop", ir.LaunchParams{"ISSUE": "3"})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := op.Launch(ctx, "planner", nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := jobRunner(t, dir, srv, map[string]string{wire.ActorEnv: "watcher", "GITHUB_WORKFLOW_REF": "o/r/.github/workflows/watcher.yml@refs/heads/main"})
	if err != nil {
		t.Fatal(err)
	}
	var denied *ghrun.DeniedError
	if _, err := w.Launch(ctx, "develop", nil); !errors.As(err, &denied) || !strings.Contains(err.Error(), "holds no agent:launch") {
		t.Errorf("watcher's launch: %v", err)
	}
	ls, err := w.List(ctx)
	if err != nil || len(ls) != 1 || ls[0].ID != dev.ID {
		t.Errorf("watcher's list = %+v, %v; want develop's session only", ls, err)
	}
	if _, _, err := w.Get(ctx, plan.ID); !errors.As(err, &denied) || !strings.Contains(err.Error(), "scoped to another actor") {
		t.Errorf("watcher's get of planner's session: %v", err)
	}
	if got, ok, err := w.Get(ctx, dev.ID); err != nil || !ok || got.Params["ISSUE"] != "3" {
		t.Errorf("watcher's get of develop's session: %+v %v %v", got, ok, err)
	}
	if _, err := w.Cancel(ctx, plan.ID); !errors.As(err, &denied) {
		t.Errorf("watcher's cancel of planner's session: %v", err)
	}
	if ok, err := w.Cancel(ctx, dev.ID); err != nil || !ok {
		t.Errorf("watcher's cancel of develop's session: %v %v", ok, err)
	}
	if run, _ := srv.Run(runID(t, plan)); run.CancelRequested {
		t.Error("a refused cancel reached GitHub")
	}
}

// TestJobRunnerRefusesBadSetups: each bad environment or installation is refused with its fix,
// before any request.
func TestJobRunnerRefusesBadSetups(t *testing.T) {
	dir, srv := jobFleet(t, scopedFleet)
	corrupt := t.TempDir()
	if err := os.MkdirAll(filepath.Join(corrupt, filepath.Dir(filepath.FromSlash(wire.ManifestPath))), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corrupt, filepath.FromSlash(wire.ManifestPath)), []byte(`{"target":"local","actors":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		env  map[string]string
		want string
	}{
		{t.TempDir(), nil, "no gh-actions installation here"},
		{corrupt, nil, "not a gh-actions manifest"},
		{dir, map[string]string{"GITHUB_REPOSITORY": ""}, "GITHUB_REPOSITORY is not set"},
		{dir, map[string]string{"GH_TOKEN": ""}, "no token"},
		{dir, map[string]string{wire.ActorEnv: "ghost"}, "names no actor"},
		{dir, map[string]string{wire.ActorEnv: "watcher", "GITHUB_WORKFLOW_REF": "o/r/.github/workflows/develop.yml@refs/heads/main"}, `runs the workflow of actor "develop"`},
	} {
		if _, err := jobRunner(t, tc.dir, srv, tc.env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.env, err, tc.want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests made while refusing", n)
	}
	// The workflow alone names the caller when AUTONOMY_ACTOR is unset.
	r, err := jobRunner(t, dir, srv, map[string]string{"GITHUB_WORKFLOW_REF": "o/r/.github/workflows/develop.yml@refs/heads/main"})
	if err != nil || r.Caller == nil || r.Caller.Who != `actor "develop"` {
		t.Errorf("caller by workflow: %+v, %v", r, err)
	}
}
