//go:build unix

package effect_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/testfs"
	"github.com/autonomyhq/autonomy/internal/tools"
)

// Safe outputs through the generated workflows, with the real pinned codex and claude against
// the scripted model: profiles/sdlc with pm holding agent:launch@develop and a cap of one comment
// (policy.box.gh-actions.tools). pm's agent job (read permissions only) runs the CLI, which calls
// autonomy's MCP server; its apply job (no model) realizes the safe outputs. A comment, a label
// change and a launch of develop land; a second comment (the cap) and a launch of the reviewer
// (outside the scope) are refused by the server and, forged into the artifact, by apply; a
// comment forged for an actor without tasks:converse is refused; staged, nothing lands.

func TestSafeOutputsCodex(t *testing.T)  { safeOutputs(t, "codex", false) }
func TestSafeOutputsClaude(t *testing.T) { safeOutputs(t, "claude", false) }
func TestSafeOutputsStaged(t *testing.T) { safeOutputs(t, "codex", true) }

// safeOutputFleet installs profiles/sdlc, edited as above, with preset as the fleet's agent.
func safeOutputFleet(t *testing.T, preset string, staged bool) *fleet {
	model := map[string]string{"codex": "gpt-5.5", "claude": "claude-sonnet-4-5"}[preset]
	return editedSDLC(t, preset, "agent:launch@develop", strings.NewReplacer(
		"capabilities: [agent:launch, agent:list, tasks:author, tasks:converse]", "capabilities: [agent:launch@develop, agent:list, tasks:author, tasks:converse]",
		"gh-actions: { model: gpt-5-codex, trustedRoles: [OWNER, MEMBER] }",
		"gh-actions: { model: "+model+", agent: "+preset+", trustedRoles: [OWNER, MEMBER], tools: { max: { comment: 1 }, staged: "+strconv.FormatBool(staged)+" } }",
	))
}

// editedSDLC is the fleet of profiles/sdlc with its profile edited, run with the real agent CLI
// preset; the edit must leave exactly one mark in it.
func editedSDLC(t *testing.T, preset, mark string, edit *strings.Replacer) *fleet {
	program := agentclitest.Require(t, preset)
	dir := t.TempDir()
	testfs.CopyTree(t, "../../../profiles/sdlc", dir)
	path := filepath.Join(dir, "ir.yml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src := edit.Replace(string(data))
	if strings.Count(src, mark) != 1 {
		t.Fatal("profiles/sdlc/ir.yml no longer has the lines this test edits")
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return newFleetFrom(t, dir, nil, program)
}

func safeOutputs(t *testing.T, preset string, staged bool) {
	f := safeOutputFleet(t, preset, staged)
	item := strconv.Itoa(f.item)
	model := modelfake.Start(
		modelfake.Turn{Tool: "comment", Args: json.RawMessage(`{"item":"` + item + `","body":"Triaged: ready for develop."}`)},
		modelfake.Turn{Tool: "comment", Args: json.RawMessage(`{"item":"` + item + `","body":"One comment too many."}`)},
		modelfake.Turn{Tool: "set_state", Args: json.RawMessage(`{"item":"` + item + `","state":"ready"}`)},
		modelfake.Turn{Tool: "launch", Args: json.RawMessage(`{"actor":"develop","subject":"` + item + `"}`)},
		modelfake.Turn{Tool: "launch", Args: json.RawMessage(`{"actor":"reviewer","subject":"` + item + `"}`)},
		modelfake.Turn{Tool: "submit_result", Args: json.RawMessage(`{"status":"done","summary":"Triaged #` + item + `.","done":["commented","labelled ready","launched develop"]}`)},
		modelfake.Turn{Text: "Done."},
	)
	defer model.Close()
	v := modelValues(f.values(model, "schedule", nil), preset, model)
	if out, ran := f.r.job(f.wf("pm"), "agent", v, false); !ran || model.Err() != nil {
		t.Fatalf("pm: ran %v, model %v\n%s", ran, model.Err(), out)
	}
	// The server refused the cap overrun and the launch outside the scope, and the model read why.
	scripted := model.Scripted()
	joined := strings.Join(scripted[len(scripted)-1].ToolOutputs, "\n")
	for _, want := range []string{"recorded", "already used its 1 comment call(s)", `may not act on "reviewer"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("the model never read %q; tool outputs:\n%s", want, joined)
		}
	}
	outputs := filepath.Join(f.r.artifacts["4242/autonomy-outputs"], "outputs.jsonl")
	recorded := readEffects(t, outputs)
	if got := effectTools(recorded); !slices.Equal(got, []string{"comment", "set_state", "launch", "submit_result"}) {
		t.Fatalf("recorded %v, want comment, set_state, launch, submit_result", got)
	}
	// What the model's job could forge into its artifact: the refused calls, written directly.
	forge(t, outputs, tools.Effect{Tool: "comment", Actor: "pm", Session: "4242", Input: json.RawMessage(`{"item":"` + item + `","body":"forged"}`)},
		tools.Effect{Tool: "launch", Actor: "pm", Session: "4242", Input: json.RawMessage(`{"actor":"reviewer"}`)})

	out, ran := f.r.job(f.wf("pm"), "apply", v, false)
	if !ran {
		t.Fatal("the apply job was skipped")
	}
	if n := strings.Count(out, "**refused**"); n != 2 {
		t.Errorf("%d refusals reported, want 2 (the cap, the scope):\n%s", n, out)
	}
	is, _ := f.fake.Issue(f.item)
	var reviewers int
	for _, run := range f.fake.Runs() {
		if run.Workflow == "reviewer.yml" {
			reviewers++
		}
	}
	if reviewers != 0 {
		t.Errorf("the reviewer was dispatched: %+v", f.fake.Runs())
	}
	if staged {
		if len(is.Comments) != 0 || slices.Contains(is.Labels, "ready") || len(f.fake.Runs()) != 0 || !strings.Contains(out, "would comment") {
			t.Errorf("staged, something landed: comments %q, labels %v, runs %+v\n%s", is.Comments, is.Labels, f.fake.Runs(), out)
		}
		return
	}
	if len(is.Comments) != 1 || is.Comments[0] != "Triaged: ready for develop." || !slices.Contains(is.Labels, "ready") {
		t.Errorf("the work item: comments %q, labels %v\n%s", is.Comments, is.Labels, out)
	}
	if dev := f.dispatched("develop.yml"); dev.Inputs["ISSUE"] != item || dev.Branch != "main" {
		t.Errorf("develop dispatched with %+v", dev)
	}

	// An actor without tasks:converse (the strategist) has no comment tool; one forged into its
	// run's artifact is refused by its apply job.
	sv := f.values(nil, "schedule", nil)
	sv["github.run_id"] = "5151"
	dir := t.TempDir()
	forge(t, filepath.Join(dir, "outputs.jsonl"), tools.Effect{Tool: "comment", Actor: "strategist", Session: "5151", Input: json.RawMessage(`{"item":"` + item + `","body":"forged"}`)},
		tools.Effect{Tool: "submit_result", Actor: "strategist", Session: "5151", Input: json.RawMessage(`{"status":"done","summary":"Planned."}`)})
	f.r.artifacts["5151/autonomy-outputs"] = dir
	if out, ran := f.r.job(f.wf("strategist"), "apply", sv, false); !ran || !strings.Contains(out, "tasks:converse") {
		t.Errorf("the strategist's forged comment: ran %v\n%s", ran, out)
	}
	if is, _ := f.fake.Issue(f.item); len(is.Comments) != 1 {
		t.Errorf("comments %q", is.Comments)
	}
}

func readEffects(t *testing.T, path string) []tools.Effect {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatalf("no safe outputs: %v", err)
	}
	defer fh.Close()
	es, err := tools.ReadOutputs(fh)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func effectTools(es []tools.Effect) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Tool
	}
	return out
}

// forge appends effects to a safe-output file as anything in the model's job could.
func forge(t *testing.T, path string, es ...tools.Effect) {
	t.Helper()
	o, err := tools.CreateOutputs(path)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for _, e := range es {
		if err := o.Append(e); err != nil {
			t.Fatal(err)
		}
	}
}

// TestApplyFailsARunWithoutAResult: done is verified, never presumed. A run whose model ends with
// prose and no result (the real codex, its final message exported beside the safe outputs) has
// its effects applied, and its apply job fails, so the run ends failed, saying why; one that
// reports its work failed through submit_result fails it too, with the agent's summary.
func TestApplyFailsARunWithoutAResult(t *testing.T) {
	f := safeOutputFleet(t, "codex", false)
	item := strconv.Itoa(f.item)
	for i, c := range []struct {
		last []modelfake.Turn
		want string
	}{
		{[]modelfake.Turn{{Text: "All done, the item is triaged."}}, "the session's result is invalid, so the run is not done"},
		{[]modelfake.Turn{{Tool: "submit_result", Args: json.RawMessage(`{"status":"failed","summary":"The item is a duplicate I cannot close."}`)}, {Text: "Stopped."}},
			"the agent reported its work failed: The item is a duplicate I cannot close."},
	} {
		model := modelfake.Start(append([]modelfake.Turn{{Tool: "comment", Args: json.RawMessage(`{"item":"` + item + `","body":"Looked at it."}`)}}, c.last...)...)
		v := modelValues(f.values(model, "schedule", nil), "codex", model)
		v["github.run_id"] = strconv.Itoa(6000 + i)
		if out, ran := f.r.job(f.wf("pm"), "agent", v, false); !ran || model.Err() != nil {
			t.Fatalf("pm: ran %v, model %v\n%s", ran, model.Err(), out)
		}
		model.Close()
		out, ran := f.r.job(f.wf("pm"), "apply", v, true)
		if !ran || !strings.Contains(out, c.want) {
			t.Errorf("the apply job of run %d: ran %v, want it failed with %q:\n%s", i, ran, c.want, out)
		}
	}
	if is, _ := f.fake.Issue(f.item); len(is.Comments) != 2 {
		t.Errorf("the comments %q: each run's effects are applied before its result is verified", is.Comments)
	}
}

// TestApplyVerifiesADeclaredResult: an actor that declares its own result contract (here an
// inline schema, installed and read at the trusted commit) is verified by its apply job exactly as
// one with the default contract: a run whose result (the real codex's final message, given the
// schema) does not validate fails, naming the field; one whose result validates passes.
func TestApplyVerifiesADeclaredResult(t *testing.T) {
	f := editedSDLC(t, "codex", "required: [labels]", strings.NewReplacer(
		"      - cron: \"*/30 * * * 1-5\"\n    timeout: 15\n",
		"      - cron: \"*/30 * * * 1-5\"\n    timeout: 15\n    result: { schema: { type: object, required: [labels], properties: { labels: { type: array, items: { type: string } } } } }\n",
		"gh-actions: { model: gpt-5-codex, trustedRoles: [OWNER, MEMBER] }",
		"gh-actions: { model: gpt-5.5, agent: codex, trustedRoles: [OWNER, MEMBER] }",
	))
	for i, c := range []struct {
		final string
		want  string // "" for a run that passes
	}{
		{`{"labels": [3]}`, "the result does not satisfy its inline schema: at /labels/0"},
		{`{"summary": "Triaged."}`, "at /: missing property 'labels'"},
		{`{"labels": ["bug"]}`, ""},
	} {
		model := modelfake.Start(modelfake.Turn{Text: c.final})
		v := modelValues(f.values(model, "schedule", nil), "codex", model)
		v["github.run_id"] = strconv.Itoa(7000 + i)
		if out, ran := f.r.job(f.wf("pm"), "agent", v, false); !ran || model.Err() != nil {
			t.Fatalf("pm: ran %v, model %v\n%s", ran, model.Err(), out)
		}
		model.Close()
		out, ran := f.r.job(f.wf("pm"), "apply", v, c.want != "")
		if c.want == "" && !ran {
			t.Errorf("the apply job of run %d failed a valid result:\n%s", i, out)
		}
		if c.want != "" && (!ran || !strings.Contains(out, c.want)) {
			t.Errorf("the apply job of run %d: ran %v, want it failed with %q:\n%s", i, ran, c.want, out)
		}
	}
}
