//go:build unix

package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// TestSkillShellBunRunnerLaunches: a reference-style skill run by the real pinned codex (against
// the scripted model) runs the reference's runner CLI in its shell. Its bun scripts/runner.ts
// launch worker --ref 7 --NOTE hi lands as the launch tool's would, with its subject and param;
// a launch of boss, outside agent:launch@worker, is refused and launches nothing; any other bun
// command runs the real bun after the shim, and with none on PATH fails saying so.
func TestSkillShellBunRunnerLaunches(t *testing.T) {
	fake := modelfake.Start(
		modelfake.Turn{Shell: "bun scripts/runner.ts launch worker --ref 7 --NOTE hi 2>&1; echo rc=$?"},
		modelfake.Turn{Shell: "bun scripts/runner.ts launch boss --ref 7 2>&1; echo rc=$?; bun x.ts 2>&1; echo rc=$?; " +
			`PATH="$(dirname "$(command -v bun)")" bun x.ts 2>&1; echo rc=$?`},
		submitDone("Handed the work on from the shell."),
		modelfake.Turn{Text: "Done."})
	defer fake.Close()
	f := handsFleet("codex")
	f.yml = strings.Replace(f.yml, "  worker:\n    behavior: scripts/noop.sh\n    triggers: [{ dispatch: true }]\n",
		"  worker:\n    behavior: scripts/noop.sh\n    triggers: [{ dispatch: true, params: { NOTE: subject.text } }]\n", 1)
	f.files["skills/lead/SKILL.md"] = "# lead\nHand item 7 to the worker: `bun scripts/runner.ts launch worker --ref 7 --NOTE hi`.\n"
	dir := installFleet(t, f, true)
	realBun := t.TempDir()
	if err := os.WriteFile(filepath.Join(realBun, "bun"), []byte("#!/bin/sh\necho real-bun \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := cliEnv(t, "codex", fake)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = kv + string(os.PathListSeparator) + realBun
		}
	}
	r := newRunner(t, dir, Options{Env: env, Exe: builtAutonomy(t)})
	s := launch(t, r, LaunchRequest{Actor: "lead"})
	if got := waitEndedWithin(t, r, s.ID, 150); got.Status != ir.Done || fake.Err() != nil {
		t.Fatalf("ended %s (%s); model: %v\n%s", got.Status, got.Reason, fake.Err(), sessionLogOf(r, s.ID))
	}
	r.Wait()
	outputs := toolOutputs(fake)
	if len(outputs) < 2 {
		t.Fatalf("the model read %d tool outputs:\n%s", len(outputs), strings.Join(outputs, "\n"))
	}
	if !strings.Contains(outputs[0], "launch: ") || !strings.Contains(outputs[0], "rc=0") {
		t.Errorf("the shell's bun scripts/runner.ts launch worker:\n%s", outputs[0])
	}
	for _, want := range []string{`may not act on "boss"`, "rc=1", "real-bun x.ts", "no real bun is installed", "rc=2"} {
		if !strings.Contains(outputs[1], want) {
			t.Errorf("the shell never read %q:\n%s", want, outputs[1])
		}
	}
	workers := workersNoBoss(t, r)
	if len(workers) != 1 || workers[0].Ref != "7" || workers[0].Params["NOTE"] != "hi" {
		t.Fatalf("workers %+v, want one on item 7 with NOTE=hi", workers)
	}
	waitEndedWithin(t, r, workers[0].ID, 30)
}

// workersNoBoss are the worker sessions of r; a boss session is an error.
func workersNoBoss(t *testing.T, r *Runner) []store.Session {
	t.Helper()
	all, _ := r.Store.List(t.Context(), store.ListOptions{All: true})
	var workers []store.Session
	for _, x := range all {
		switch x.Actor {
		case "worker":
			workers = append(workers, x)
		case "boss":
			t.Errorf("boss was launched: %+v", x)
		}
	}
	return workers
}
