//go:build unix

package effect_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/testfs"
)

// referenceSkill is a PM skill in the reference implementation's style: it acts through gh and
// the reference's runner CLI, as an unmodified profile does.
const referenceSkill = `---
name: pm
description: Triage the board and launch a worker.
---
# PM tick

Comment on the work item with ` + "`gh issue comment <n> --body ...`" + `, then LAUNCH a worker
through the Runner:

` + "```" + `
bun scripts/runner.ts launch develop --ref <issue-number> --branch agent/issue-<issue-number>
` + "```" + `
`

// TestReferenceSkillShims: a profile of ours whose PM skill is written in the reference's style
// (profiles/sdlc, pm holding agent:launch@develop), run as its compiled workflow declares with
// the real pinned codex against the scripted model. In pm's model job (read permissions only)
// the shell's `gh issue comment`, `autonomy runner launch` and `bun scripts/runner.ts launch`
// are recorded as effects; `gh workflow run reviewer.yml` (outside the scope) and `gh pr create`
// are refused at once, naming the tool. The apply job lands the comment and both launches, and
// nothing else. The strategist (no tasks:converse) has its `gh issue comment` refused, records
// nothing, and its apply job lands nothing.
func TestReferenceSkillShims(t *testing.T) {
	t.Parallel()
	referenceSkillShims(t, "codex")
}

// TestReferenceSkillShimsClaude is TestReferenceSkillShims with the real pinned Claude Code: its
// Bash tool finds the same shims on PATH, with the same effects and refusals.
func TestReferenceSkillShimsClaude(t *testing.T) {
	t.Parallel()
	referenceSkillShims(t, "claude")
}

func referenceSkillShims(t *testing.T, preset string) {
	program := agentclitest.Require(t, preset)
	dir := t.TempDir()
	testfs.CopyTree(t, "../../../profiles/sdlc", dir)
	editFile(t, filepath.Join(dir, "ir.yml"), "capabilities: [agent:launch, agent:list, tasks:author, tasks:converse]", "capabilities: [agent:launch@develop, agent:list, tasks:author, tasks:converse]")
	if preset == "claude" {
		editFile(t, filepath.Join(dir, "ir.yml"), "gh-actions: { model: gpt-5-codex,", "gh-actions: { model: claude-sonnet-4-5, agent: claude,")
	}
	if err := os.WriteFile(filepath.Join(dir, "skills", "pm", "SKILL.md"), []byte(referenceSkill), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFleetFrom(t, dir, nil, program)
	item := strconv.Itoa(f.item)
	pm := modelfake.Start(
		modelfake.Turn{Shell: "gh issue comment " + item + " --body hi"},
		modelfake.Turn{Shell: "autonomy runner launch develop --param ISSUE=" + item},
		modelfake.Turn{Shell: "bun scripts/runner.ts launch develop --ref " + item + " --branch agent/issue-" + item},
		modelfake.Turn{Shell: "gh workflow run reviewer.yml -f PR=" + item + `; echo "exit $?"`},
		modelfake.Turn{Shell: `gh pr create --title x --body y; echo "exit $?"`},
		finalResult("Launched develop."),
	)
	defer pm.Close()
	v := modelValues(f.values(pm, "schedule", nil), preset, pm)
	if out, ran := f.r.job(f.wf("pm"), "agent", v, false); !ran || pm.Err() != nil {
		t.Fatalf("pm: ran %v, model %v\n%s", ran, pm.Err(), out)
	}
	outputs := lastOutputs(pm)
	want := []string{"queued comment", "queued launch", "queued launch", `may not act on "reviewer"`, "propose tool"}
	if len(outputs) != len(want) {
		t.Fatalf("tool outputs %q", outputs)
	}
	for i, w := range want {
		if !strings.Contains(outputs[i], w) {
			t.Errorf("command %d told the model %q, want %q", i, outputs[i], w)
		}
	}
	for i := 3; i < 5; i++ {
		if !strings.Contains(outputs[i], "exit 1") {
			t.Errorf("refused command %d: %q, want exit 1", i, outputs[i])
		}
	}
	if !strings.Contains(outputs[2], "--branch is ignored") {
		t.Errorf("the bun launch did not say --branch is ignored: %q", outputs[2])
	}
	path := filepath.Join(f.r.artifacts["4242/autonomy-outputs"], "outputs.jsonl")
	if got := effectTools(readEffects(t, path)); !slices.Equal(got, []string{"comment", "launch", "launch"}) {
		t.Fatalf("recorded %v, want comment, launch, launch", got)
	}
	if len(f.fake.Runs()) != 0 {
		t.Fatalf("the model's job dispatched: %+v", f.fake.Runs())
	}
	if out, ran := f.r.job(f.wf("pm"), "apply", v, false); !ran || strings.Contains(out, "**refused**") {
		t.Fatalf("pm apply: ran %v\n%s", ran, out)
	}
	is, _ := f.fake.Issue(f.item)
	if !slices.Equal(is.Comments, []string{"hi"}) {
		t.Errorf("comments %q, want [hi]", is.Comments)
	}
	var develops int
	for _, run := range f.fake.Runs() {
		if run.Workflow != "develop.yml" || run.Inputs["ISSUE"] != item {
			t.Errorf("dispatched %+v, want develop.yml with ISSUE=%s", run, item)
		}
		develops++
	}
	if develops != 2 {
		t.Errorf("develop dispatched %d times, want 2 (runner launch, bun launch)", develops)
	}

	// The strategist holds no tasks:converse: its gh issue comment is refused in its job.
	st := modelfake.Start(modelfake.Turn{Shell: "gh issue comment " + item + ` --body forged; echo "exit $?"`}, finalResult("Tried to comment."))
	defer st.Close()
	sv := modelValues(f.values(st, "schedule", nil), preset, st)
	sv["github.run_id"] = "5151"
	if out, ran := f.r.job(f.wf("strategist"), "agent", sv, false); !ran || st.Err() != nil {
		t.Fatalf("strategist: ran %v, model %v\n%s", ran, st.Err(), out)
	}
	if out := lastOutputs(st); len(out) != 1 || !strings.Contains(out[0], "tasks:converse") || !strings.Contains(out[0], "exit 1") {
		t.Errorf("the strategist's comment told the model %q, want refused for want of tasks:converse", out)
	}
	if es := readEffects(t, filepath.Join(f.r.artifacts["5151/autonomy-outputs"], "outputs.jsonl")); len(es) != 0 {
		t.Errorf("the strategist recorded %+v", es)
	}
	if _, ran := f.r.job(f.wf("strategist"), "apply", sv, false); !ran {
		t.Fatal("the strategist's apply job was skipped")
	}
	if is, _ := f.fake.Issue(f.item); len(is.Comments) != 1 {
		t.Errorf("comments %q", is.Comments)
	}
}

// modelValues points a job's values at model for preset: claude reads its own key and URL.
func modelValues(v map[string]string, preset string, model *modelfake.Server) map[string]string {
	if preset == "claude" {
		v["secrets.ANTHROPIC_API_KEY"], v["vars.AUTONOMY_MODEL_URL"] = "sk-ant-e2e", model.AnthropicBaseURL()
	}
	return v
}

// lastOutputs is the output of each shell call the model made, in order.
func lastOutputs(m *modelfake.Server) []string {
	var out []string
	for _, r := range m.Scripted() {
		if n := len(r.ToolOutputs); n > 0 {
			out = append(out, r.ToolOutputs[n-1])
		}
	}
	return out
}

// editFile replaces old with new in a file, once, failing when old is not there.
func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data), old) != 1 {
		t.Fatalf("%s no longer has %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}
