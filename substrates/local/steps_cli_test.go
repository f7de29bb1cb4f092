//go:build unix

package local

import (
	"encoding/json"
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
