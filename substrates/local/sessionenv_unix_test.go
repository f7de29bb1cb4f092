//go:build unix

package local

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/ir"
)

var (
	buildAutonomy sync.Once
	autonomyBin   string
	autonomyErr   error
)

// builtAutonomy builds cmd/autonomy once per test process.
func builtAutonomy(t *testing.T) string {
	t.Helper()
	buildAutonomy.Do(func() {
		dir, err := os.MkdirTemp("", "autonomy-local-test")
		if err != nil {
			autonomyErr = err
			return
		}
		autonomyBin = filepath.Join(dir, "autonomy-under-test") // not named autonomy: the session's link is
		if out, err := exec.Command("go", "build", "-o", autonomyBin, "../../cmd/autonomy").CombinedOutput(); err != nil {
			autonomyErr = err
			t.Logf("%s", out)
		}
	})
	if autonomyErr != nil {
		t.Fatalf("go build: %v", autonomyErr)
	}
	return autonomyBin
}

// An orchestrator's autonomy runner launch finds the autonomy that runs the runner, from a PATH
// that holds no autonomy: the session's PATH starts with a link to it.
func TestSessionFindsAutonomyOnItsPath(t *testing.T) {
	exe := builtAutonomy(t)
	f := fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  lead:
    behavior: scripts/lead.sh
    capabilities: [agent:launch, agent:list]
    triggers: [{ dispatch: true }]
  worker:
    behavior: scripts/worker.sh
    triggers: [{ dispatch: true }]
`, files: map[string]string{
		"scripts/lead.sh":   "#!/bin/sh\nset -e\nautonomy runner launch worker > \"$AUTONOMY_DIR/launched\"\nautonomy runner list --all > \"$AUTONOMY_DIR/listed\"\n",
		"scripts/worker.sh": "#!/bin/sh\ntrue\n",
	}}
	dir := installFleet(t, f, false)
	if _, err := exec.LookPath("autonomy"); err == nil {
		t.Logf("note: an autonomy is on this test's PATH; the session's PATH below holds none")
	}
	r := newRunner(t, dir, Options{Exe: exe, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}})
	s := launch(t, r, LaunchRequest{Actor: "lead"})
	if got := waitEnded(t, r, s.ID); got.Status != ir.Done {
		t.Fatalf("lead ended %s: %s\n%s", got.Status, got.Reason, readFile(t, filepath.Join(dir, StateDir, "logs", s.ID+".log")))
	}
	worker := strings.TrimSpace(readFile(t, filepath.Join(dir, "launched")))
	w, ok, err := r.Store.Get(t.Context(), worker)
	if err != nil || !ok || w.Actor != "worker" {
		t.Fatalf("the lead's launch printed %q, which is no worker session (%v %v)", worker, ok, err)
	}
	if listed := readFile(t, filepath.Join(dir, "listed")); !strings.Contains(listed, worker) {
		t.Errorf("runner list does not show the worker %s:\n%s", worker, listed)
	}
	// The worker is started by the lead's supervisor (adopt.go), here this process: it is let
	// end before the installation is removed.
	w = waitEnded(t, r, worker)
	for i := 0; i < 300 && alive(w.SupervisorPID); i++ {
		time.Sleep(20 * time.Millisecond)
	}
}
