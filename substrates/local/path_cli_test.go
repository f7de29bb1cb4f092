//go:build unix

package local

import (
	"os"
	"path/filepath"
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

// TestPresetLeavesNothingInTheTemporaryDirectory: a preset session's real pinned CLI, which
// runs a command through its sandbox, leaves nothing in the temporary directory it was given:
// Claude Code's per-folder state and its sandbox's sockets, and codex's, go to a TMPDIR of the
// session's own, removed with it (agent.Preset.PrivateTmp). Only the egress jails' folder of
// this user (autonomy-egress-UID, kept empty) may be there.
func TestPresetLeavesNothingInTheTemporaryDirectory(t *testing.T) {
	for _, preset := range []string{"codex", "claude"} {
		t.Run(preset, func(t *testing.T) {
			fake := modelfake.Start(
				modelfake.Turn{Shell: "echo sandboxed; echo rc=$?"},
				submitDone("Ran a command."),
				modelfake.Turn{Text: "Done."})
			defer fake.Close()
			// Short: the sandbox's sockets are made in it (a socket's path holds 107 bytes).
			tmp, err := os.MkdirTemp("", "pt")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(tmp) })
			f := handsFleet(preset)
			dir := installFleet(t, f, true)
			r := newRunner(t, dir, Options{Env: append(cliEnv(t, preset, fake), "TMPDIR="+tmp), Exe: builtAutonomy(t)})
			s := launch(t, r, LaunchRequest{Actor: "lead"})
			got := waitEndedWithin(t, r, s.ID, 150)
			r.Wait()
			if fake.Err() != nil || got.Status != ir.Done {
				t.Fatalf("ended %s (%s); model: %v\n%s", got.Status, got.Reason, fake.Err(), sessionLogOf(r, s.ID))
			}
			if shell := strings.Join(toolOutputs(fake), "\n"); !strings.Contains(shell, "rc=0") {
				t.Fatalf("the shell command did not run:\n%s", shell)
			}
			entries, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), "autonomy-egress-") {
					continue
				}
				t.Errorf("the session left %s in its runner's TMPDIR", filepath.Join(tmp, e.Name()))
			}
		})
	}
}
