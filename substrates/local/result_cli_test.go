//go:build unix

package local

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/ir"
)

// submitDone is the scripted model delivering its session's result through the submit_result
// tool, as the instructions after its skill tell it (tools.ResultInstructions): a session is
// done only with one.
func submitDone(summary string) modelfake.Turn {
	args, _ := json.Marshal(map[string]any{"status": "done", "summary": summary, "done": []string{summary}})
	return modelfake.Turn{Tool: "submit_result", Args: args}
}

// finalResult is the scripted model ending with its result as its final message, the way a
// session without the tool delivers it (codex writes it to the result file, the runner reads
// claude's from its JSON output): used where the model is one whose MCP tools codex offers as a
// namespace, which the scripted model cannot call into.
func finalResult(summary string) modelfake.Turn {
	text, _ := json.Marshal(map[string]any{"status": "done", "summary": summary})
	return modelfake.Turn{Text: string(text)}
}

// resultFleet is one skill actor, lead, run by preset, with the default result contract.
func resultFleet(preset string) fleet {
	box := "{ agent: " + preset + " }"
	if preset == "codex" {
		box = "{ agent: codex, model: gpt-5.5 }" // as handsFleet: MCP tools behind tool_search
	}
	return fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  lead:
    behavior: skills/lead
    capabilities: [tasks:converse]
    triggers: [{ dispatch: true }]
policy:
  box:
    local: ` + box + `
`, files: map[string]string{"skills/lead/SKILL.md": "# lead\nGreet the team.\n"}}
}

// The real pinned CLIs are told the default contract after the skill, and deliver their result
// through submit_result: a session is done only with a result that validates and says done. One
// that ends with prose and no result, or reports its work failed, ends failed, saying why.
func TestPresetSessionsDeliverTheirResult(t *testing.T) {
	failed, _ := json.Marshal(map[string]any{"status": "failed", "summary": "The team channel is gone."})
	for _, preset := range []string{"codex", "claude"} {
		for _, c := range []struct {
			name   string
			turns  []modelfake.Turn
			status ir.SessionStatus
			want   string
		}{
			{"result", []modelfake.Turn{submitDone("Greeted the team."), {Text: "Done."}}, ir.Done, "exit status 0 and the result (delivered by submit_result) validates against autonomy.result.v1"},
			{"final-message", []modelfake.Turn{finalResult("Greeted the team.")}, ir.Done, "validates against autonomy.result.v1"},
			{"no-result", []modelfake.Turn{{Text: "I greeted the team, all done."}}, ir.Failed, "exit status 0 but the result is not JSON"},
			{"reported-failed", []modelfake.Turn{{Tool: "submit_result", Args: failed}, {Text: "Could not."}}, ir.Failed, "the agent reported its work failed: The team channel is gone."},
		} {
			t.Run(preset+"/"+c.name, func(t *testing.T) {
				fake := modelfake.Start(c.turns...)
				defer fake.Close()
				r, s := fleetRun(t, preset, resultFleet(preset), fake)
				if fake.Err() != nil || s.Status != c.status || !strings.Contains(s.Reason+s.Verified, c.want) {
					t.Fatalf("ended %s (%s | %s), want %s with %q; model: %v\n%s", s.Status, s.Reason, s.Verified, c.status, c.want, fake.Err(), sessionLogOf(r, s.ID))
				}
				scripted := fake.Scripted()
				if len(scripted) == 0 || !strings.Contains(scripted[0].Prompt, "Greet the team.") || !strings.Contains(scripted[0].Prompt, "## Your result (autonomy.result.v1)") {
					t.Errorf("the model was not told the contract after its skill (%d scripted requests)", len(scripted))
				}
			})
		}
	}
}
