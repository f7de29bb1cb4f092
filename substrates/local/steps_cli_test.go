//go:build unix

package local

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/store"
)

// stepsToolsFleet is lead, a step playbook of one step run by preset, holding
// agent:launch@worker; worker and boss are scripts.
func stepsToolsFleet(preset string) fleet {
	f := handsFleet(preset)
	f.yml = strings.Replace(f.yml, "behavior: skills/lead", "behavior: playbooks/lead.md", 1)
	f.yml = strings.Replace(f.yml, `[tasks:converse, "agent:launch@worker", code:propose]`, `["agent:launch@worker"]`, 1)
	f.files["playbooks/lead.md"] = "# Lead\n\n## STEP 1: Dispatch\n\nLaunch the worker with your tools.\n"
	return f
}

// A step playbook's step gets the session's MCP server, as a preset's skill does: from the real
// pinned CLI, a launch of an allowed actor lands in the runner's store as the session's, and a
// launch outside agent:launch@worker is refused, the refusal read by the model, and nothing lands.
func TestStepPlaybookStepsActThroughTheTools(t *testing.T) {
	for _, preset := range []string{"codex", "claude"} {
		t.Run(preset, func(t *testing.T) {
			fake := modelfake.Start(
				modelfake.Turn{Tool: "launch", Args: json.RawMessage(`{"actor":"worker","subject":"7"}`)},
				modelfake.Turn{Tool: "launch", Args: json.RawMessage(`{"actor":"boss"}`)},
				modelfake.Turn{Text: "Done."})
			defer fake.Close()
			r, s := fleetRun(t, preset, stepsToolsFleet(preset), fake)
			if fake.Err() != nil {
				t.Fatalf("ended %s (%s); model: %v\n%s", s.Status, s.Reason, fake.Err(), sessionLogOf(r, s.ID))
			}
			joined := strings.Join(toolOutputs(fake), "\n")
			for _, want := range []string{`"actor":"worker"`, `refused: launch: actor "lead" may not act on "boss"`} {
				if !strings.Contains(joined, want) {
					t.Errorf("the model never read %q:\n%s\n%s", want, joined, sessionLogOf(r, s.ID))
				}
			}
			all, _ := r.Store.List(t.Context(), store.ListOptions{All: true})
			var actors []string
			for _, x := range all {
				actors = append(actors, x.Actor)
				if x.Actor == "worker" {
					if x.Origin != "session:"+s.ID {
						t.Errorf("the worker was launched by %q, want the step playbook's session %s", x.Origin, s.ID)
					}
					waitEndedWithin(t, r, x.ID, 30)
				}
			}
			if strings.Join(actors, ",") != "lead,worker" && strings.Join(actors, ",") != "worker,lead" {
				t.Errorf("sessions %v, want the lead and the worker its step launched", actors)
			}
		})
	}
}

// In the installation root, no agent process of a preset's session whose actor holds no agent:*
// capability can write the runner's state (state.db, its -wal and -shm), at its own path or at the
// place its jail keeps writable for the session's MCP server, nor move the folder away; its tools,
// which the runner realizes through that place, still act, and its shell's runner verbs, asked
// through the session's door, are refused for want of the capability.
func TestRootSessionCannotWriteTheStore(t *testing.T) {
	for _, preset := range []string{"codex", "claude"} {
		t.Run(preset, func(t *testing.T) {
			// A script by its path: Claude Code refuses a command line whose variables it cannot check.
			probe := filepath.Join(t.TempDir(), "probe-state")
			script := "#!/bin/sh\ncd \"$AUTONOMY_DIR\"\nfor f in state.db state.db-wal state.db-shm; do\n" +
				"  if (printf x >> .autonomy/state/$f) 2>/dev/null; then echo \"wrote $f\"; else echo \"refused $f\"; fi\n" +
				"  if (printf x >> \"${AUTONOMY_STATE_DIR:-/nonexistent}/$f\") 2>/dev/null; then echo \"wrote alias $f\"; else echo \"refused alias $f\"; fi\n" +
				"done\nmv .autonomy/state .autonomy/moved 2>/dev/null && echo moved-state\nmv .autonomy .moved 2>/dev/null && echo moved-dir\n" +
				"echo \"alias=${AUTONOMY_STATE_DIR:-none}\"\n" +
				// Another session's result path is not writable (a result planted there would be
				// taken for that session's own); the session's own result folder is.
				"if (printf x > .autonomy/state/results/99999-zz.json) 2>/dev/null; then echo \"wrote another's result\"; else echo \"refused another's result\"; fi\n" +
				"if (printf x > \"$(dirname \"$AUTONOMY_RESULT\")/probe\") 2>/dev/null; then echo \"own result folder writable\"; fi\n"
			if err := os.WriteFile(probe, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			fake := modelfake.Start(
				modelfake.Turn{Shell: probe + " 2>&1; autonomy runner list 2>&1; echo rc=$?"},
				modelfake.Turn{Tool: "comment", Args: json.RawMessage(`{"item":"7","body":"Triaged."}`)},
				submitDone("Triaged item 7."),
				modelfake.Turn{Text: "Done."})
			defer fake.Close()
			f := handsFleet(preset)
			f.yml = strings.Replace(f.yml, `[tasks:converse, "agent:launch@worker", code:propose]`, `[tasks:converse, code:propose]`, 1)
			r, s := fleetRun(t, preset, f, fake)
			outputs := toolOutputs(fake)
			if fake.Err() != nil || len(outputs) < 2 {
				t.Fatalf("ended %s (%s); model: %v; outputs %q\n%s", s.Status, s.Reason, fake.Err(), outputs, sessionLogOf(r, s.ID))
			}
			shell := outputs[0]
			for _, want := range []string{"refused state.db", "refused state.db-wal", "refused state.db-shm",
				"refused alias state.db", "refused alias state.db-wal", "refused alias state.db-shm", "alias=/",
				"refused another's result", "own result folder writable",
				`actor "lead") may not list sessions: it holds no agent:list`, "rc=1"} {
				if !strings.Contains(shell, want) {
					t.Errorf("the agent's shell: no %q:\n%s", want, shell)
				}
			}
			if strings.Contains(shell, "wrote") || strings.Contains(shell, "moved") {
				t.Errorf("the agent's shell wrote or moved the runner's state:\n%s", shell)
			}
			if !strings.Contains(outputs[1], `"recorded":true`) {
				t.Errorf("the comment tool: %s\n%s", outputs[1], sessionLogOf(r, s.ID))
			}
			if comments := countEvents(t, r, s.ID, toolEvent("comment")); comments != 1 || s.Status != "done" {
				t.Errorf("ended %s with %d comments recorded, want done with the tool's one\n%s", s.Status, comments, sessionLogOf(r, s.ID))
			}
		})
	}
}

// A step playbook in the installation root whose actor holds no agent:* capability runs with
// the runner's state read-only to its agents: its run records its steps in the store at
// AUTONOMY_STATE_DIR, its step's comment tool lands, and it ends done.
func TestWalledStepPlaybookRecordsItsRun(t *testing.T) {
	fake := modelfake.Start(
		modelfake.Turn{Tool: "comment", Args: json.RawMessage(`{"item":"7","body":"Triaged."}`)},
		modelfake.Turn{Text: "Done."})
	defer fake.Close()
	f := stepsToolsFleet("codex")
	f.yml = strings.Replace(f.yml, `["agent:launch@worker"]`, `[tasks:converse]`, 1)
	r, s := fleetRun(t, "codex", f, fake)
	if fake.Err() != nil || s.Status != "done" {
		t.Fatalf("ended %s (%s); model: %v\n%s", s.Status, s.Reason, fake.Err(), sessionLogOf(r, s.ID))
	}
	if comments := countEvents(t, r, s.ID, toolEvent("comment")); comments != 1 || !strings.Contains(sessionLogOf(r, s.ID), "step 1: ok") {
		t.Errorf("%d comments recorded, want the step's one; log:\n%s", comments, sessionLogOf(r, s.ID))
	}
}

// countEvents is how many events of kind session id recorded.
func countEvents(t *testing.T, r *Runner, id, kind string) int {
	t.Helper()
	events, err := r.Store.Events(t.Context(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}
