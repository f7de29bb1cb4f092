//go:build unix

package local

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// A session's launch is started by the caller's supervisor, not by the autonomy the session
// ran: the worker's supervisor is this runner, and it says so (event adopted).
func TestSessionLaunchIsAdoptedByTheCallersSupervisor(t *testing.T) {
	exe := builtAutonomy(t)
	f := fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  lead:
    behavior: scripts/lead.sh
    capabilities: [agent:launch]
    triggers: [{ dispatch: true }]
  worker:
    behavior: scripts/worker.sh
    triggers: [{ dispatch: true }]
`, files: map[string]string{
		"scripts/lead.sh":   "#!/bin/sh\nset -e\nautonomy runner launch worker > \"$AUTONOMY_DIR/launched\"\nsleep 1\n" + scriptDone,
		"scripts/worker.sh": "#!/bin/sh\necho \"$AUTONOMY_SESSION\" > \"$AUTONOMY_DIR/worked\"\n" + scriptDone,
	}}
	dir := installFleet(t, f, false)
	r := newRunner(t, dir, Options{Exe: exe, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}})
	s := launch(t, r, LaunchRequest{Actor: "lead"})
	if got := waitEnded(t, r, s.ID); got.Status != ir.Done {
		t.Fatalf("lead ended %s: %s", got.Status, got.Reason)
	}
	worker := strings.TrimSpace(readFile(t, filepath.Join(dir, "launched")))
	w := waitEnded(t, r, worker)
	if w.Status != ir.Done || w.Origin != "session:"+s.ID || strings.TrimSpace(readFile(t, filepath.Join(dir, "worked"))) != worker {
		t.Fatalf("the worker: %+v", w)
	}
	evs, _ := r.Store.Events(t.Context(), worker, 0)
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	if !strings.Contains(strings.Join(kinds, " "), "adopted") {
		t.Fatalf("the worker's events %v: it was not adopted by the lead's supervisor", kinds)
	}
	r.Wait()
}

// The last adopt pass of a session whose store fails says so in the session's log: the sessions
// it launched are not left to fail later as "never started" without a word of why.
func TestFailedAdoptPassIsLogged(t *testing.T) {
	r := newRunner(t, installFleet(t, resumeFleet, false), Options{})
	if err := r.Store.Close(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	r.adoptWhile(t.Context(), "s-parent", &log)()
	if !strings.Contains(log.String(), "cannot start the sessions it launched") || !strings.Contains(log.String(), "closed") {
		t.Fatalf("the session's log after a failed adopt pass: %q", log.String())
	}
}

// A supervisor this process started (an adopted session's) is spared by the escaped-process
// sweep even when the store cannot be read: the sweep must not kill it for want of an answer.
func TestStartedSupervisorIsSparedWhenTheStoreFails(t *testing.T) {
	dir := installFleet(t, resumeFleet, false)
	exe := filepath.Join(t.TempDir(), "supervisor.sh")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, dir, Options{Detach: true, Exe: exe})
	ctx := t.Context()
	var s store.Session
	if err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		s = store.Session{Actor: "writer", Kind: "agent", Status: ir.Running, Origin: "operator", CreatedAt: time.Now()}
		return tx.Insert(&s)
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.start(ctx, s); err != nil {
		t.Fatal(err)
	}
	got, _, err := r.Store.Get(ctx, s.ID)
	if err != nil || got.SupervisorPID == 0 {
		t.Fatalf("the started supervisor was not recorded: %+v, %v", got, err)
	}
	defer func() {
		_ = syscall.Kill(got.SupervisorPID, syscall.SIGKILL)
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(got.SupervisorPID, &ws, 0, nil)
	}()
	if !r.otherSupervisor(got.SupervisorPID) {
		t.Fatal("the supervisor it started is not spared while the store answers")
	}
	if err := r.Store.Close(); err != nil {
		t.Fatal(err)
	}
	if !r.otherSupervisor(got.SupervisorPID) {
		t.Fatal("with the store failing, the supervisor it started would be killed as an escaped process")
	}
}
