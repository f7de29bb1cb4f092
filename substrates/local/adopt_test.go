//go:build unix

package local

import (
	"path/filepath"
	"strings"
	"testing"

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
