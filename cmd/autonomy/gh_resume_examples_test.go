//go:build unix

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agentcli"
	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
)

// ghResumeExample runs the example of autonomy gh resume as the resume job of steps-triage's
// workflow runs it, on the state the earlier jobs make: the agent job's playbook run (the real
// pinned codex, a scripted model) parks at its ask and its state is uploaded as the run's
// artifact; the ask job posts the ask on #42 and uploads its record; the maintainer answers with
// /agent answer, which the control job records and dispatches. The example then resumes that run
// with the answer (… stands for the paused run's id and the ask's token, which the dispatch
// carries), and the answered run, continued by playbook resume as the next agent job does, gives
// the model the maintainer's answer.
func ghResumeExample(t *testing.T, line string, ex example) {
	t.Helper()
	codex := agentclitest.Require(t, "codex")
	if code, _, errOut := run(t, "compile", "profiles/steps-triage", "--target", "gh-actions", "--out", "."); code != 0 {
		t.Fatalf("setup compile: exit %d\n%s", code, errOut)
	}
	wfs := filepath.Join(".github", "workflows")
	resumeEnv := jobEnvOf(t, wfs, "resume", "triage")
	checkJobEnv(t, line, "the job running autonomy gh resume", ex, resumeEnv, githubDefaults) // gh_stdin_examples_test.go
	fake, _ := ghCodeHost(t)
	for fake.AddIssue("an item", "") < 42 {
	}
	paused, err := fake.AddRun("triage.yml", "workflow_dispatch") // ITEM=42
	if err != nil {
		t.Fatal(err)
	}
	runID := strconv.FormatInt(paused, 10)
	t.Setenv("AUTONOMY_AGENT_CACHE", agentcli.CacheDir()) // before HOME moves
	t.Setenv("HOME", t.TempDir())
	t.Setenv("PATH", filepath.Dir(codex)+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("GITHUB_REPOSITORY", "o/r")
	t.Setenv("GITHUB_RUN_ID", runID)

	// The agent job: the playbook classifies the report, then parks at its ask.
	temp := t.TempDir() // the agent job's RUNNER_TEMP
	first := modelfake.Start(modelfake.Turn{Text: "major"})
	defer first.Close()
	agentStep(t, temp, first, map[string]string{"ITEM": "42", "REPORT": "The app crashes when I save."})
	copyTreeTo(t, filepath.Join(temp, "autonomy-steps"), "autonomy-steps") // upload, then the ask job's download
	if _, ok := fake.AddArtifact(paused, "autonomy-steps"); !ok {
		t.Fatal("the paused run's artifact")
	}

	// The ask job.
	jobStep(t, wfs, "ask", "triage", map[string]string{"AUTONOMY_SUBJECT": "42", "GH_TOKEN": "t"})
	if code, out, errOut := run(t, "gh", "ask", "--envelope", "autonomy-steps/envelope.json", "--record", "autonomy-ask/ask.json"); code != 0 {
		t.Fatalf("the ask job: exit %d\n%s%s", code, out, errOut)
	}
	fake.AddArtifact(paused, "autonomy-ask")
	is, _ := fake.Issue(42)
	m := regexp.MustCompile(`<!-- autonomy:ask actor=triage token=([0-9a-f]{32}) `).FindStringSubmatch(is.Comments[len(is.Comments)-1])
	if m == nil {
		t.Fatalf("no ask on #42: %q", is.Comments)
	}
	token := m[1]

	// The maintainer's answer, through the control job, which dispatches the resume.
	body := "/agent answer " + token + " api"
	id, err := fake.AddComment(42, "ada", body)
	if err != nil {
		t.Fatal(err)
	}
	jobStep(t, wfs, "control", "", map[string]string{"AUTONOMY_COMMENT": body, "AUTONOMY_COMMENT_ID": strconv.FormatInt(id, 10),
		"AUTONOMY_ITEM": "42", "AUTONOMY_BY": "ada", "AUTONOMY_ASSOCIATION": "OWNER", "GH_TOKEN": "t"})
	if code, out, errOut := run(t, "gh", "control"); code != 0 {
		t.Fatalf("the control job: exit %d\n%s%s", code, out, errOut)
	}
	runs := fake.Runs()
	dispatched := runs[len(runs)-1]
	if dispatched.Inputs["autonomy_resume_ask"] != token || dispatched.Inputs["autonomy_resume_run"] != runID {
		t.Fatalf("the control job dispatched %+v", dispatched)
	}

	// The example, in the resume job of the dispatched run.
	for k := range resumeEnv {
		t.Setenv(k, "") // only what the example sets
	}
	t.Setenv("GITHUB_OUTPUT", filepath.Join(t.TempDir(), "output"))
	for i, kv := range ex.env {
		switch kv {
		case "GH_TOKEN=…":
			ex.env[i] = "GH_TOKEN=t"
		case "AUTONOMY_RESUME_RUN=…":
			ex.env[i] = "AUTONOMY_RESUME_RUN=" + dispatched.Inputs["autonomy_resume_run"]
		case "AUTONOMY_RESUME_ASK=…":
			ex.env[i] = "AUTONOMY_RESUME_ASK=" + dispatched.Inputs["autonomy_resume_ask"]
		}
	}
	code, out, errOut := runExample(t, line, ex)
	output, _ := os.ReadFile(os.Getenv("GITHUB_OUTPUT"))
	if code != 0 || !strings.Contains(out, "resuming the playbook of triage (run "+runID+") with the answer") || string(output) != "continue=true\n" {
		t.Fatalf("%s: exit %d, step output %q\n%s%s", line, code, output, out, errOut)
	}
	if fake.HasArtifact(paused, "autonomy-steps") {
		t.Errorf("%s: the paused run's artifact is still there (the pause is not spent)", line)
	}

	// The next agent job continues the answered run: the model gets the maintainer's answer.
	second := modelfake.Start(modelfake.Turn{Text: "Team api: look at the save handler first."})
	defer second.Close()
	next := t.TempDir()
	copyTreeTo(t, flagValue(ex.args, "--out"), filepath.Join(next, "autonomy-steps")) // the hand-over
	agentStep(t, next, second, map[string]string{"AUTONOMY_RESUME_ASK": token})
	if reqs := second.Scripted(); len(reqs) != 1 || !strings.Contains(reqs[0].Prompt, "the person answered: api") {
		var prompts []string
		for _, r := range reqs {
			prompts = append(prompts, r.Prompt[max(0, strings.LastIndex(r.Prompt, "# Triage")):])
		}
		t.Errorf("%s: the resumed run's prompts, want one with the answer api:\n%s", line, strings.Join(prompts, "\n---\n"))
	}
	if note, err := os.ReadFile(filepath.Join(next, "autonomy-artifacts", "artifact.md")); err != nil || !strings.Contains(string(note), "save handler") {
		t.Errorf("%s: the resumed run's artifact: %q (%v)", line, note, err)
	}
}

// jobStep sets the environment of the step of the compiled workflows in dir that runs
// autonomy gh VERB (of actor, when not ""): its literal values, and for each ${{ … }} the value
// in given ("" when not given).
func jobStep(t *testing.T, dir, verb, actor string, given map[string]string) {
	t.Helper()
	for k, v := range jobEnvOf(t, dir, verb, actor) {
		if strings.Contains(v, "${{") {
			v = given[k]
		}
		t.Setenv(k, v)
	}
}

// agentStep runs the playbook run (or resume, when inputs sets AUTONOMY_RESUME_ASK) of
// steps-triage's agent job as its step's script does, with the arguments parsed from that script,
// the state and artifacts under temp (its RUNNER_TEMP), against the scripted model; the envelope
// goes to temp/autonomy-steps/envelope.json.
func agentStep(t *testing.T, temp string, model *modelfake.Server, inputs map[string]string) {
	t.Helper()
	env, script := jobStepOf(t, filepath.Join(".github", "workflows"), "jail", "triage")
	for k, v := range env {
		if strings.Contains(v, "${{") {
			v = inputs[k]
		}
		t.Setenv(k, v)
	}
	t.Setenv("OPENAI_BASE_URL", model.OpenAIBaseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test")
	wd := mustGetwd(t)
	vars := map[string]string{"RUNNER_TEMP": temp, "GITHUB_WORKSPACE": wd, "state": filepath.Join(temp, "autonomy-steps")}
	expand := func(s string) string {
		return os.Expand(strings.ReplaceAll(s, `"`, ""), func(k string) string {
			k = strings.TrimSuffix(k, ":-") // ${X:-}: X, or nothing
			if v, ok := vars[k]; ok {
				return v
			}
			return os.Getenv(k)
		})
	}
	agent := regexp.MustCompile(`(?m)^\s*agent=\((.*)\)$`).FindStringSubmatch(script)
	verb := "run"
	if inputs["AUTONOMY_RESUME_ASK"] != "" {
		verb = "resume"
	}
	cmd := regexp.MustCompile(`"\$AUTONOMY_BIN" (playbook ` + verb + ` .*) > "\$state/envelope.json"`).FindStringSubmatch(script)
	if agent == nil || cmd == nil {
		t.Fatalf("the agent job's script runs no playbook %s:\n%s", verb, script)
	}
	var args []string
	for _, w := range strings.Fields(cmd[1]) {
		if w == `"${agent[@]}"` {
			for _, a := range strings.Fields(agent[1]) {
				args = append(args, expand(a))
			}
			continue
		}
		args = append(args, expand(w))
	}
	for _, d := range []string{"autonomy-steps", "autonomy-artifacts"} {
		if err := os.MkdirAll(filepath.Join(temp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := run(t, args...)
	if err := os.WriteFile(filepath.Join(temp, "autonomy-steps", "envelope.json"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code != 0 || model.Err() != nil {
		t.Fatalf("the agent job's %v: exit %d, model %v\n%s%s", args, code, model.Err(), out, errOut)
	}
}
