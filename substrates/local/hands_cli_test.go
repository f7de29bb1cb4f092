//go:build unix

package local

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// The real pinned CLIs call the tools of the MCP server their local session gets (autonomy
// runner mcp, started by the CLI): a comment, a launch of an allowed actor and a proposal land
// in the runner's store; a launch outside agent:launch@worker and a second proposal past the cap
// are refused, the refusal reaches the model, and nothing lands. The agent's shell, with and
// without AUTONOMY_SESSION, cannot launch beyond the actor's capabilities either.

// handsFleet is a lead run by preset, holding tasks:converse, agent:launch@worker and
// code:propose; worker and boss are scripts.
func handsFleet(preset string) fleet {
	box := "{ agent: " + preset + " }"
	if preset == "codex" {
		box = "{ agent: codex, model: gpt-5.5 }" // a model whose MCP tools codex defers behind tool_search
	}
	return fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  lead:
    behavior: skills/lead
    capabilities: [tasks:converse, "agent:launch@worker", code:propose]
    triggers: [{ dispatch: true }]
  worker:
    behavior: scripts/noop.sh
    triggers: [{ dispatch: true }]
  boss:
    behavior: scripts/noop.sh
    triggers: [{ dispatch: true }]
policy:
  box:
    local: ` + box + `
`, files: map[string]string{"skills/lead/SKILL.md": "# lead\nTriage item 7 with your tools.\n", "scripts/noop.sh": "#!/bin/sh\ntrue\n" + scriptDone}}
}

// handsRun launches lead with the real CLI of preset against fake and waits for its end.
func handsRun(t *testing.T, preset string, fake *modelfake.Server) (*Runner, store.Session) {
	t.Helper()
	return fleetRun(t, preset, handsFleet(preset), fake)
}

// fleetRun launches f's lead with the real CLI of preset against fake and waits for its end.
func fleetRun(t *testing.T, preset string, f fleet, fake *modelfake.Server) (*Runner, store.Session) {
	t.Helper()
	dir := installFleet(t, f, true)
	r := newRunner(t, dir, Options{Env: cliEnv(t, preset, fake), Exe: builtAutonomy(t)})
	s := launch(t, r, LaunchRequest{Actor: "lead"})
	waitEndedWithin(t, r, s.ID, 150)
	r.Wait()
	got, _, _ := r.Store.Get(t.Context(), s.ID)
	return r, got
}

func TestPresetSessionsActThroughTheTools(t *testing.T) {
	for _, preset := range []string{"codex", "claude"} {
		t.Run(preset, func(t *testing.T) {
			self := builtAutonomy(t) // by its absolute path (TestPresetShellFindsAutonomy runs the plain name)
			fake := modelfake.Start(
				modelfake.Turn{Tool: "comment", Args: json.RawMessage(`{"item":"7","body":"Triaged: ready."}`)},
				modelfake.Turn{Tool: "launch", Args: json.RawMessage(`{"actor":"worker","subject":"7"}`)},
				modelfake.Turn{Tool: "launch", Args: json.RawMessage(`{"actor":"boss"}`)},
				modelfake.Turn{Tool: "propose", Args: json.RawMessage(`{"title":"Fix item 7","body":"The fix."}`)},
				modelfake.Turn{Tool: "propose", Args: json.RawMessage(`{"title":"Again"}`)},
				submitDone("Triaged item 7."),
				modelfake.Turn{Shell: self + " runner launch boss 2>&1; echo rc=$?; env -u AUTONOMY_SESSION " + self + " runner launch boss 2>&1; echo rc=$?; " +
					self + " runner launch worker >/dev/null 2>&1; echo launched=$?"},
				modelfake.Turn{Text: "Done."})
			defer fake.Close()
			r, s := handsRun(t, preset, fake)
			if fake.Err() != nil || s.Status != ir.Done {
				t.Fatalf("ended %s (%s); model: %v\n%s", s.Status, s.Reason, fake.Err(), sessionLogOf(r, s.ID))
			}
			outputs := toolOutputs(fake)
			joined := strings.Join(outputs, "\n")
			if n := strings.Count(joined, `"recorded":true`); n != 3 {
				t.Errorf("the model read %d recorded effects, want the comment, the proposal and the result:\n%s", n, joined)
			}
			for _, want := range []string{`"actor":"worker"`, `refused: launch: actor "lead" may not act on "boss"`, "refused: propose: this session already used its 1 propose call"} {
				if !strings.Contains(joined, want) {
					t.Errorf("the model never read %q:\n%s", want, joined)
				}
			}
			shell := ""
			if len(outputs) > 0 {
				shell = outputs[len(outputs)-1]
			}
			if strings.Count(shell, "rc=1") != 2 || !strings.Contains(shell, "may not launch \"boss\"") || !strings.Contains(shell, "never acts as the operator") {
				t.Errorf("the shell's runner launch of boss, with and without %s, was not refused:\n%s", SessionEnv, shell)
			}
			all, _ := r.Store.List(t.Context(), store.ListOptions{All: true})
			var actors []string
			for _, x := range all {
				actors = append(actors, x.Actor)
			}
			if !strings.Contains(shell, "launched=0") || len(all) != 3 || strings.Count(strings.Join(actors, ","), "worker") != 2 {
				t.Errorf("sessions %v (its shell's launch of worker: %q), want the lead and the two workers its tool and its shell launched", actors, shell)
			}
			for _, x := range all {
				if x.Actor == "worker" {
					waitEndedWithin(t, r, x.ID, 30)
				}
			}
			events, err := r.Store.Events(t.Context(), s.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			counts := map[string]int{}
			var proposal ProposalRecord
			for _, e := range events {
				counts[e.Kind]++
				if e.Kind == toolEvent("propose") {
					if err := json.Unmarshal([]byte(e.Message), &proposal); err != nil {
						t.Errorf("the proposal record %q: %v", e.Message, err)
					}
				}
			}
			if counts["tool:comment"] != 1 || counts["tool:launch"] != 2 || counts["tool:propose"] != 1 {
				t.Errorf("recorded effects %v, want one comment, two launches (the tool's, the shell's), one proposal", counts)
			}
			head := gitRun(t, r.In.Dir, "rev-parse", "HEAD")
			if proposal.Title != "Fix item 7" || proposal.Head != head || proposal.Branch != "main" {
				t.Errorf("proposal %+v, want its title and the workspace's head %s on main", proposal, head)
			}
		})
	}
}

// toolOutputs are the tool results the scripted model read, in order: the history of its last
// scripted request.
func toolOutputs(fake *modelfake.Server) []string {
	scripted := fake.Scripted()
	if len(scripted) == 0 {
		return nil
	}
	return scripted[len(scripted)-1].ToolOutputs
}

// An isolated session's sandbox cannot write the runner's state: its shell's runner verbs are
// refused with the tools to use, and nothing lands, while its tools still act.
func TestIsolatedSessionShellIsWalledOff(t *testing.T) {
	for _, preset := range []string{"codex", "claude"} {
		t.Run(preset, func(t *testing.T) {
			self := builtAutonomy(t)
			fake := modelfake.Start(
				modelfake.Turn{Shell: self + " runner launch worker 2>&1; echo rc=$?; touch \"$AUTONOMY_DIR/.autonomy/state/x\" 2>&1 || echo not-writable"},
				modelfake.Turn{Tool: "launch", Args: json.RawMessage(`{"actor":"worker"}`)},
				submitDone("Launched the worker."),
				modelfake.Turn{Text: "Done."})
			defer fake.Close()
			f := handsFleet(preset)
			f.yml = strings.Replace(f.yml, "    behavior: skills/lead\n", "    behavior: skills/lead\n    execution: { workspace: isolated }\n", 1)
			dir := installFleet(t, f, true)
			r := newRunner(t, dir, Options{Env: cliEnv(t, preset, fake), Exe: self})
			s := launch(t, r, LaunchRequest{Actor: "lead"})
			if got := waitEndedWithin(t, r, s.ID, 150); got.Status != ir.Done || fake.Err() != nil {
				t.Fatalf("ended %s (%s); model: %v\n%s", got.Status, got.Reason, fake.Err(), sessionLogOf(r, s.ID))
			}
			r.Wait()
			out := strings.Join(toolOutputs(fake), "\n")
			for _, want := range []string{"read-only inside the sandbox of session " + s.ID, "rc=1", "not-writable", `"actor":"worker"`} {
				if !strings.Contains(out, want) {
					t.Errorf("the model never read %q:\n%s", want, out)
				}
			}
			all, _ := r.Store.List(t.Context(), store.ListOptions{All: true})
			if len(all) != 2 {
				t.Errorf("%d sessions, want the lead and the worker its tool launched", len(all))
			}
			for _, x := range all {
				waitEndedWithin(t, r, x.ID, 30)
			}
		})
	}
}

// TestCodexCodeModeActsThroughTheTools runs codex with its default model (none in the box):
// codex 0.169.0 then offers the model only code mode's exec (JavaScript whose global tools holds
// the shell and the session's MCP tools). The session's tools still act, and its result lands:
// what a newcomer's profile without a model gets from `autonomy dev model`.
func TestCodexCodeModeActsThroughTheTools(t *testing.T) {
	f := handsFleet("codex")
	f.yml = strings.Replace(f.yml, "{ agent: codex, model: gpt-5.5 }", "{ agent: codex }", 1)
	fake := modelfake.Start(
		modelfake.Turn{Tool: "comment", Args: json.RawMessage(`{"item":"7","body":"Triaged: ready."}`)},
		modelfake.Turn{Tool: "launch", Args: json.RawMessage(`{"actor":"worker","subject":"7"}`)},
		modelfake.Turn{Shell: "echo from-the-shell"},
		submitDone("Triaged item 7."),
		modelfake.Turn{Text: "Done."})
	defer fake.Close()
	r, s := fleetRun(t, "codex", f, fake)
	if fake.Err() != nil || s.Status != ir.Done {
		t.Fatalf("ended %s (%s); model: %v\n%s", s.Status, s.Reason, fake.Err(), sessionLogOf(r, s.ID))
	}
	if first := fake.Scripted()[0]; first.Model == "gpt-5.5" || !slices.Contains(first.Tools, "exec") || slices.Contains(first.Tools, "exec_command") {
		t.Fatalf("model %s with tools %v: not code mode, the test no longer tests it", first.Model, first.Tools)
	}
	joined := strings.Join(toolOutputs(fake), "\n")
	for _, want := range []string{`"recorded":true`, `"actor":"worker"`, "from-the-shell"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the model never read %q:\n%s", want, joined)
		}
	}
	if !strings.Contains(s.Verified, "delivered by submit_result") {
		t.Errorf("the session's result: %q, want the one submitted through the tool", s.Verified)
	}
}
