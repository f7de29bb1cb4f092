//go:build unix

package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// A step playbook's run killed mid-step (SIGKILL: its deferred clean-up never runs) leaves no
// temporary folder behind: the step's folder is made in a TMPDIR the supervisor gave the run,
// under the operator's, and removed when the session is over.
func TestKilledStepRunLeavesNoTemporaryFolder(t *testing.T) {
	dir := installFleet(t, resumeFleet, false) // writer: a step playbook
	tmp, bin := t.TempDir(), t.TempDir()
	seen := filepath.Join(bin, "seen")
	// The step's agent notes where its result goes (in the step's temporary folder), then kills
	// the run that started it.
	agent := filepath.Join(bin, "killer.sh")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\necho \"$AUTONOMY_RESULT\" > "+seen+"\nkill -KILL $PPID\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, dir, Options{Exe: builtAutonomy(t), Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "TMPDIR=" + tmp, AgentEnv + `=["` + agent + `"]`}})
	s := launch(t, r, LaunchRequest{Actor: "writer"})
	if got := waitEnded(t, r, s.ID); got.Status != ir.Failed {
		t.Fatalf("the killed run ended %s (%s)", got.Status, got.Reason)
	}
	r.Wait()
	if result := strings.TrimSpace(readFile(t, seen)); !strings.HasPrefix(result, tmp+string(filepath.Separator)) {
		t.Fatalf("the step's folder %s is not under the operator's TMPDIR %s", result, tmp)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left in TMPDIR after the session: %s", e.Name())
	}
}
