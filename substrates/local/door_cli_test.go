//go:build unix

package local

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// doorFleet is handsFleet with helper, a preset actor in the installation root holding
// agent:launch on every actor, whose prelaunch waits: a session of it is in flight, queued
// behind the lead's hold of the root, while the lead's shell names it.
func doorFleet(preset string) fleet {
	f := handsFleet(preset)
	f.yml = strings.Replace(f.yml, "  worker:\n", "  helper:\n    behavior: skills/lead\n    capabilities: [agent:launch]\n"+
		"    triggers: [{ dispatch: true }]\n    prelaunch: \"sleep 600\"\n  worker:\n", 1)
	return f
}

// TestRootLauncherShellGoesThroughTheDoor: the agent of a preset's session in the installation
// root whose actor holds agent:launch@worker (the real pinned CLI, against the scripted model)
// cannot write the runner's store, yet its shell's autonomy runner launch of the worker lands,
// as the session, and one of boss, outside @worker, is refused; its gh shim's comments, their
// bodies read from stdin and from a file in the shell, are recorded as the session's; naming
// another session in flight (helper, which may launch anyone) in AUTONOMY_SESSION does not act
// as it.
func TestRootLauncherShellGoesThroughTheDoor(t *testing.T) {
	for _, preset := range []string{"codex", "claude"} {
		t.Run(preset, func(t *testing.T) {
			tmp := t.TempDir()
			other := filepath.Join(tmp, "other")
			// A script by its path: Claude Code refuses a command line whose variables it cannot check.
			body := filepath.Join(tmp, "body")
			if err := os.WriteFile(body, []byte("From a file."), 0o644); err != nil {
				t.Fatal(err)
			}
			probe := filepath.Join(tmp, "probe")
			script := "#!/bin/sh\ncd \"$AUTONOMY_DIR\"\n" +
				"autonomy runner launch worker --ref 7 2>&1; echo \"launch-worker rc=$?\"\n" +
				"autonomy runner launch boss 2>&1; echo \"launch-boss rc=$?\"\n" +
				// The shims' writes go through the door too, with the body a --body-file read here.
				"echo 'From stdin.' | gh issue comment 7 --body-file - 2>&1; echo \"gh-stdin rc=$?\"\n" +
				"gh issue comment 7 --body-file " + body + " 2>&1; echo \"gh-file rc=$?\"\n" +
				"for f in state.db state.db-wal state.db-shm; do\n" +
				"  if (printf x >> .autonomy/state/$f) 2>/dev/null; then echo \"wrote $f\"; else echo \"refused $f\"; fi\n" +
				"done\n" +
				"n=0; while [ ! -s " + other + " ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n+1)); done\n" +
				"AUTONOMY_SESSION=$(cat " + other + ") autonomy runner launch boss 2>&1; echo \"forged rc=$?\"\n"
			if err := os.WriteFile(probe, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			fake := modelfake.Start(
				modelfake.Turn{Shell: probe},
				submitDone("Handed item 7 to the worker."),
				modelfake.Turn{Text: "Done."})
			defer fake.Close()
			dir := installFleet(t, doorFleet(preset), true)
			r := newRunner(t, dir, Options{Env: cliEnv(t, preset, fake), Exe: builtAutonomy(t)})
			s := launch(t, r, LaunchRequest{Actor: "lead"})
			for i := 0; ; i++ {
				got, _, _ := r.Store.Get(t.Context(), s.ID)
				if got.PID > 0 || got.Status.Ended() || i > 600 {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			helper := launch(t, r, LaunchRequest{Actor: "helper"})
			if err := os.WriteFile(other, []byte(helper.ID), 0o644); err != nil {
				t.Fatal(err)
			}
			got := waitEndedWithin(t, r, s.ID, 150)
			if _, err := r.Cancel(t.Context(), helper.ID); err != nil {
				t.Fatal(err)
			}
			if got.Status != ir.Done || fake.Err() != nil {
				t.Fatalf("ended %s (%s); model: %v\n%s", got.Status, got.Reason, fake.Err(), sessionLogOf(r, s.ID))
			}
			outputs := toolOutputs(fake)
			if len(outputs) < 1 {
				t.Fatalf("the model read no tool output\n%s", sessionLogOf(r, s.ID))
			}
			shell := outputs[0]
			for _, want := range []string{"launch-worker rc=0", `may not launch "boss"`, "launch-boss rc=1",
				"gh-stdin rc=0", "gh-file rc=0", "refused state.db", "refused state.db-wal", "refused state.db-shm", "forged rc=1"} {
				if !strings.Contains(shell, want) {
					t.Errorf("the agent's shell: no %q:\n%s", want, shell)
				}
			}
			if strings.Contains(shell, "wrote") {
				t.Errorf("the agent's shell wrote the runner's store:\n%s", shell)
			}
			var bodies []string
			events, _ := r.Store.Events(t.Context(), s.ID, 0)
			for _, e := range events {
				if e.Kind == toolEvent("comment") {
					var c struct{ Body string }
					_ = json.Unmarshal([]byte(e.Message), &c)
					bodies = append(bodies, strings.TrimSpace(c.Body))
				}
			}
			if strings.Join(bodies, "|") != "From stdin.|From a file." {
				t.Errorf("the shell's gh comments recorded %q, want the one from stdin, then the one from the file", bodies)
			}
			workers := workersNoBoss(t, r)
			if len(workers) != 1 || workers[0].Ref != "7" || workers[0].Origin != "session:"+s.ID {
				t.Errorf("workers %+v, want one on item 7 launched by session %s", workers, s.ID)
			}
			all, _ := r.Store.List(t.Context(), store.ListOptions{All: true})
			for _, x := range all {
				waitEndedWithin(t, r, x.ID, 30)
			}
			r.Wait()
		})
	}
}
