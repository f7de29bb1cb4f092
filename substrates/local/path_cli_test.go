//go:build unix

package local

import (
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/ir"
)

// TestPresetShellFindsAutonomy: the shell of a preset session's real pinned CLI runs a plain
// autonomy runner list: the autonomy on the session's PATH (its link, sessionenv.go) is found,
// though codex runs its commands through bash, whose login shell would reset PATH from
// /etc/profile (the preset turns the login shell off: allow_login_shell=false).
func TestPresetShellFindsAutonomy(t *testing.T) {
	for _, preset := range []string{"codex", "claude"} {
		t.Run(preset, func(t *testing.T) {
			fake := modelfake.Start(
				modelfake.Turn{Shell: "autonomy runner list 2>&1; echo rc=$?"},
				submitDone("Listed the sessions."),
				modelfake.Turn{Text: "Listed."})
			defer fake.Close()
			f := handsFleet(preset)
			f.yml = strings.Replace(f.yml, "code:propose]", "code:propose, agent:list]", 1)
			r, s := fleetRun(t, preset, f, fake)
			if fake.Err() != nil || s.Status != ir.Done {
				t.Fatalf("ended %s (%s); model: %v\n%s", s.Status, s.Reason, fake.Err(), sessionLogOf(r, s.ID))
			}
			outputs := toolOutputs(fake)
			shell := strings.Join(outputs, "\n")
			if !strings.Contains(shell, "rc=0") || !strings.Contains(shell, s.ID) {
				t.Fatalf("the shell's plain autonomy runner list did not list the session %s:\n%s", s.ID, shell)
			}
		})
	}
}
