//go:build unix

package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

var gatedFleet = fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  gated:
    behavior: scripts/gated.sh
    triggers: [{ dispatch: true }]
`, files: map[string]string{
	"scripts/gated.sh": `#!/bin/sh
while [ ! -e "$AUTONOMY_DIR/gate" ]; do sleep 0.01; done
` + scriptDone,
}}

// A detached supervisor records itself as its session's supervisor before it starts the agent.
// Its launcher records it too, but only once it started it: a launcher slow to do so (a loaded
// machine) left a session whose agent had ended, and was being settled by its supervisor, with no
// supervisor on record, and whoever reconciled it then (runner list) failed it as orphaned: the
// release-gate trial of init's next steps, failed before its approval.
func TestSupervisorIsRecordedBeforeItsLauncherRecordsIt(t *testing.T) {
	dir := installFleet(t, gatedFleet, false)
	r := newRunner(t, dir, Options{Detach: true, Exe: builtAutonomy(t), Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}})
	lister := newRunner(t, dir, Options{}) // another process's runner list
	ctx := context.Background()
	r.supervisor.startedHook = func(id string) {
		// The launcher is held here: the supervisor starts the agent meanwhile.
		s := waitFor(t, r, id, func(s store.Session) bool { return s.PID > 0 || s.Status.Ended() })
		if s.SupervisorPID == 0 {
			t.Errorf("session %s runs its agent (pid %d) with no supervisor on record", id, s.PID)
		}
		// The agent ends, its supervisor settles it, while the launcher still holds.
		if err := os.WriteFile(filepath.Join(dir, "gate"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(time.Minute); proc.Alive(s.PID, s.PIDStart) && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if got, _, err := lister.Get(ctx, id); err != nil || got.Status == ir.Failed {
			t.Errorf("reconciled once its agent ended: %s (%s), %v", got.Status, got.Reason, err)
		}
	}
	s := launch(t, r, LaunchRequest{Actor: "gated"})
	if got := waitEnded(t, r, s.ID); got.Status != ir.Done {
		t.Errorf("the session ended %s: %s", got.Status, got.Reason)
	}
}
