//go:build unix

package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/modelfake"
)

const triageSteps = "# Triage\n\nTriage one bug report.\n\n## SYSTEM\n\nYou triage bug reports for the app team.\n\n" +
	"## INPUTS\n\n- `REPORT` (string): the report\n- `AREA` (enum: api, ui): where it is\n\n" +
	"## STEP 1: Classify\n\nClassify the report {{REPORT}} in the {{AREA}}.\n\n@output(kind: enum(major, minor))\n\n" +
	"## STEP 2: Details\n\n```if kind == \"major\"```\n\n### STEP 2a: Breakage\n\nSay what breaks.\n\n```else```\n\n" +
	"### STEP 2b: Polish\n\nSay why it is minor.\n\n```endif```\n\n" +
	"## STEP 3: Note\n\n@elicit(input, \"Who owns {{REPORT}}?\")\n\nWrite the note for its owner.\n\n## ARTIFACTS\n\ntype: markdown\n"

type stepsEnvelope struct {
	OK     bool
	Status string
	Output struct {
		Steps []struct {
			Step, Status, Output, Value, Answer string
		}
		Outputs  map[string]string
		Artifact *struct{ Path, Content string }
	}
	RequiresInput *struct{ Step, Kind, Prompt, ResumeToken string }
	Error         *struct{ Message string }
}

func decodeSteps(t *testing.T, out string) stepsEnvelope {
	t.Helper()
	var env stepsEnvelope
	i := strings.Index(out, "{\n")
	if i < 0 || json.Unmarshal([]byte(out[i:]), &env) != nil {
		t.Fatalf("no envelope in:\n%s", out)
	}
	return env
}

// TestSmokeStepPlaybook runs a 3-step playbook with a branch and an @elicit through
// autonomy playbook run with each preset's real CLI against the scripted model: each step is one
// conversation of the CLI, and the model received every prior output (asserted from the endpoint's
// recorded requests). The answer resumes the run in another process, against a second endpoint,
// so that the last step's request is told apart.
func TestSmokeStepPlaybook(t *testing.T) {
	for _, preset := range agent.Names() {
		t.Run(preset, func(t *testing.T) { smokeStepPlaybook(t, preset) })
	}
}

func smokeStepPlaybook(t *testing.T, preset string) {
	program := smoke(t, preset)
	bin := autonomyBinary(t)
	repo := newRepo(t)
	book := filepath.Join(t.TempDir(), "triage.md")
	if err := os.WriteFile(book, []byte(triageSteps), 0o644); err != nil {
		t.Fatal(err)
	}
	state, arts := filepath.Join(t.TempDir(), "state.db"), filepath.Join(t.TempDir(), "artifacts")

	fake := modelfake.Start(modelfake.Turn{Text: "major"})
	defer fake.Close()
	env := cliEnv(t, program, preset, baseURL(fake, preset))
	args := []string{bin, "playbook", "run", book, "--agent", preset}
	if preset == "codex" {
		args = append(args, "--model", "gpt-5-codex") // codex offers its tools for a model it knows
	}
	out, err := run(t, repo, env, "", append(args, "--workspace", repo, "--state", state, "--artifacts-dir", arts, "--args-json", `{"REPORT": "crash-on-save", "AREA": "api"}`)...)
	if err != nil || fake.Err() != nil {
		t.Fatalf("run: %v; model: %v\n%s", err, fake.Err(), out)
	}
	first := decodeSteps(t, out)
	if first.Status != "needs_input" || first.RequiresInput == nil || first.RequiresInput.Prompt != "Who owns crash-on-save?" || first.Output.Outputs["kind"] != "major" {
		t.Fatalf("run: %s", out)
	}
	var got []string
	for _, s := range first.Output.Steps {
		got = append(got, s.Step+"="+s.Status)
	}
	if strings.Join(got, " ") != "1=ok 2=ok 2a=ok 2b=skipped 3=pending" {
		t.Fatalf("steps %v", got)
	}
	var prompts []string
	for _, r := range fake.Scripted() {
		prompts = append(prompts, r.Prompt)
	}
	if len(prompts) != 2 || !strings.Contains(prompts[0], "Classify the report crash-on-save in the api.") || strings.Contains(prompts[0], "### STEP 1") {
		t.Fatalf("step 1's request (%d scripted requests):\n%s", len(prompts), strings.Join(prompts, "\n----\n"))
	}
	if p := prompts[1]; !strings.Contains(p, "You triage bug reports for the app team.") || !strings.Contains(p, "### STEP 1: Classify\n\nmajor") || !strings.Contains(p, "Say what breaks.") {
		t.Fatalf("step 2a's request lacks step 1's output:\n%s", p)
	}

	fake2 := modelfake.Start(modelfake.Turn{Text: "Owner note: team-api fixes the crash on save."})
	defer fake2.Close()
	env2 := cliEnv(t, program, preset, baseURL(fake2, preset))
	out, err = run(t, repo, env2, "", bin, "playbook", "resume", "--state", state, "--token", first.RequiresInput.ResumeToken, "--answer", "team-api")
	if err != nil || fake2.Err() != nil {
		t.Fatalf("resume: %v; model: %v\n%s", err, fake2.Err(), out)
	}
	done := decodeSteps(t, out)
	if !done.OK || done.Status != "ok" || len(fake.Scripted()) != 2 {
		t.Fatalf("resume: %s (first endpoint: %d requests)", out, len(fake.Scripted()))
	}
	last := fake2.Scripted()
	if len(last) != 1 {
		t.Fatalf("%d requests for step 3", len(last))
	}
	for _, want := range []string{"### STEP 1: Classify\n\nmajor", "### STEP 2a: Breakage\n\nmajor", "the person answered: team-api", "Write the note for its owner."} {
		if !strings.Contains(last[0].Prompt, want) {
			t.Errorf("step 3's request lacks %q:\n%s", want, last[0].Prompt)
		}
	}
	art, err := os.ReadFile(filepath.Join(arts, "artifact.md"))
	if err != nil || string(art) != "Owner note: team-api fixes the crash on save." {
		t.Fatalf("artifact %q %v", art, err)
	}
}

// TestSmokeStepPlaybookRunner runs the same playbook as an actor's session under the local
// runner, each step the box's codex in its sandbox: the @elicit parks the session, runner update
// --answer continues it (against a second endpoint), and it is done with its artifact.
func TestSmokeStepPlaybookRunner(t *testing.T) {
	const preset = "codex"
	program := smoke(t, preset)
	bin := autonomyBinary(t)
	repo := newRepo(t)
	prof := filepath.Join(t.TempDir(), "profile")
	book := strings.Replace(triageSteps, "(enum: api, ui)", "(string: api)", 1) // launch params are the inputs
	files := map[string]string{
		"playbooks/triage.md": book,
		"ir.yml": "schema: autonomy.ir.v1\ntargets: [local]\npolicy:\n  box:\n    local: { agent: codex, model: gpt-5-codex }\n" +
			"actors:\n  triage:\n    behavior: playbooks/triage.md\n    triggers: [{ dispatch: true, params: { REPORT: subject.ref } }]\n",
	}
	for name, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(prof, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(prof, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := run(t, repo, os.Environ(), "", bin, "compile", prof, "--target", "local", "--out", repo); err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
	fake := modelfake.Start(modelfake.Turn{Text: "minor"})
	defer fake.Close()
	env := cliEnv(t, program, preset, baseURL(fake, preset))
	out, err := run(t, repo, env, "", bin, "runner", "--dir", repo, "launch", "triage", "--ref", "slow-save")
	if err != nil {
		t.Fatalf("launch: %v\n%s", err, out)
	}
	id := strings.TrimSpace(out)
	token := ""
	deadline := time.Now().Add(3 * time.Minute)
	for token == "" {
		if m := regexp.MustCompile(`--token (rt_[A-Za-z0-9_-]+) --answer`).FindStringSubmatch(sessionLog(t, repo, id)); m != nil {
			token = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s never parked:\n%s", id, sessionLog(t, repo, id))
		}
		time.Sleep(300 * time.Millisecond)
	}
	list, _ := run(t, repo, env, "", bin, "runner", "--dir", repo, "list")
	if !strings.Contains(list, "Who owns slow-save?") {
		t.Errorf("list does not show the question:\n%s", list)
	}
	if n := len(fake.Scripted()); n != 2 || !strings.Contains(fake.Scripted()[1].Prompt, "### STEP 1: Classify\n\nminor") || !strings.Contains(fake.Scripted()[1].Prompt, "Say why it is minor.") {
		t.Fatalf("%d requests; step 2b's request lacks step 1's output", n)
	}
	fake2 := modelfake.Start(modelfake.Turn{Text: "Owner note: polish later."})
	defer fake2.Close()
	env2 := cliEnv(t, program, preset, baseURL(fake2, preset))
	if out, err := run(t, repo, env2, "", bin, "runner", "--dir", repo, "update", id, "--token", token, "--answer", "team-ui"); err != nil {
		t.Fatalf("update --answer: %v\n%s", err, out)
	}
	s := waitEnded(t, bin, repo, id, env2)
	if s.Status != "done" || fake2.Err() != nil || len(fake2.Scripted()) != 1 {
		t.Fatalf("ended %s (%s); model: %v\nlog:\n%s", s.Status, s.Reason, fake2.Err(), sessionLog(t, repo, id))
	}
	if p := fake2.Scripted()[0].Prompt; !strings.Contains(p, "the person answered: team-ui") || !strings.Contains(p, "### STEP 2b: Polish\n\nminor") {
		t.Errorf("step 3's request:\n%s", p)
	}
	art, err := os.ReadFile(filepath.Join(repo, ".autonomy", "state", "results", id+".artifacts", "artifact.md"))
	if err != nil || string(art) != "Owner note: polish later." {
		t.Fatalf("artifact %q %v", art, err)
	}
}
