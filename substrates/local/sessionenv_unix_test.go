//go:build unix

package local

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/testbin"
	"github.com/autonomyhq/autonomy/ir"
)

// builtAutonomy is the autonomy binary of the module's source (internal/testbin), linked into
// the test's own temporary directory as autonomy-under-test (not named autonomy: the session's
// link is), so nothing of it outlives the test.
func builtAutonomy(t *testing.T) string {
	t.Helper()
	src := testbin.Path(t)
	dst := filepath.Join(t.TempDir(), "autonomy-under-test")
	if err := os.Link(src, dst); err != nil {
		data, rerr := os.ReadFile(src)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if werr := os.WriteFile(dst, data, 0o755); werr != nil {
			t.Fatal(werr)
		}
	}
	return dst
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
		"scripts/lead.sh":   "#!/bin/sh\nset -e\nautonomy runner launch worker > \"$AUTONOMY_DIR/launched\"\nautonomy runner list --all > \"$AUTONOMY_DIR/listed\"\n" + scriptDone,
		"scripts/worker.sh": "#!/bin/sh\ntrue\n" + scriptDone,
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

// The link to autonomy at the front of a session's PATH is kept with the installation's state,
// one folder per binary: sessions leave no folder in the temp dir, even when their supervisor is
// killed before it could remove one (1,151 such folders were found in a machine's /tmp).
func TestSessionBinIsStable(t *testing.T) {
	exe := builtAutonomy(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	f := fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  path:
    behavior: scripts/path.sh
    triggers: [{ dispatch: true }]
`, files: map[string]string{"scripts/path.sh": "#!/bin/sh\nprintf '%s' \"${PATH%%:*}\" > \"$AUTONOMY_DIR/path-$AUTONOMY_SESSION\"\n" + scriptDone}}
	dir := installFleet(t, f, false)
	r := newRunner(t, dir, Options{Exe: exe, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "TMPDIR=" + tmp}})
	var first []string
	for range 2 {
		s := launch(t, r, LaunchRequest{Actor: "path"})
		if got := waitEnded(t, r, s.ID); got.Status != ir.Done {
			t.Fatalf("ended %s: %s", got.Status, got.Reason)
		}
		first = append(first, readFile(t, filepath.Join(dir, "path-"+s.ID)))
	}
	if first[0] != first[1] || filepath.Dir(first[0]) != filepath.Join(dir, filepath.FromSlash(BinDir)) {
		t.Fatalf("the sessions' PATH starts with %q, want one folder under %s", first, filepath.Join(dir, BinDir))
	}
	if target, err := os.Readlink(filepath.Join(first[0], "autonomy")); err != nil || target != exe {
		t.Fatalf("%s/autonomy links to %q (%v), want %s", first[0], target, err, exe)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "autonomy-bin-*")); len(left) > 0 {
		t.Fatalf("sessions made %v in the temp dir", left)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, filepath.FromSlash(BinDir))); len(entries) != 1 {
		t.Fatalf("%s holds %d entries, want the one folder of this binary", BinDir, len(entries))
	}
}
