//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeAgent stands in for an agent CLI: it keeps the prompt of each step, counts its runs (a side
// effect a step must not repeat), kills the autonomy process that started it when a crash marker
// for its step exists, and answers with the scripted answer of its step.
const fakeAgent = `#!/bin/sh
dir=$(dirname "$0")
step=$AUTONOMY_STEP
cat > "$dir/prompt-$step.txt"
echo "$step" >> "$dir/count"
if [ -f "$dir/crash-$step" ]; then rm "$dir/crash-$step"; kill -9 $PPID; exit 1; fi
if [ -f "$dir/answer-$step" ]; then cat "$dir/answer-$step"; else echo "output of step $step"; fi
`

type stepsEnv struct {
	t                  *testing.T
	dir, book, db, art string
}

func newStepsEnv(t *testing.T, answers map[string]string) *stepsEnv {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent"), []byte(fakeAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	for step, a := range answers {
		if err := os.WriteFile(filepath.Join(dir, "answer-"+step), []byte(a), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, err := os.ReadFile("testdata/steps/release.md")
	if err != nil {
		t.Fatal(err)
	}
	book := filepath.Join(dir, "release.md")
	if err := os.WriteFile(book, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return &stepsEnv{t: t, dir: dir, book: book, db: filepath.Join(dir, "state.db"), art: filepath.Join(dir, "artifacts")}
}

type stepsEnvelope struct {
	OK     bool
	Status string
	Output struct {
		Steps []struct {
			Step, Status, Output, Var, Value, Answer, Reason string
		}
		Outputs  map[string]string
		Artifact *struct{ Type, Path, Content string }
	}
	RequiresInput *struct {
		Step, Kind, Prompt, ResumeToken string
		Options                         []string
	}
	Error *struct {
		Kind, Message, Step string
		Diagnostics         []string
	}
}

// run runs the release playbook with args through the binary, in its own process.
func (e *stepsEnv) run(args string, extra ...string) (stepsEnvelope, int) {
	e.t.Helper()
	argv := append([]string{"playbook", "run", e.book, "--state", e.db, "--workspace", e.dir, "--artifacts-dir", e.art,
		"--agent-argv", `["` + filepath.Join(e.dir, "agent") + `"]`, "--args-json", args}, extra...)
	return e.cli(argv...)
}

func (e *stepsEnv) cli(args ...string) (stepsEnvelope, int) {
	e.t.Helper()
	out, errOut, code := cli(e.t, nil, args...)
	var env stepsEnvelope
	if out != "" {
		if err := json.Unmarshal([]byte(out), &env); err != nil {
			e.t.Fatalf("%v: not an envelope: %v\n%s\n%s", args, err, out, errOut)
		}
	}
	return env, code
}

func (e *stepsEnv) resume(token string, answer ...string) (stepsEnvelope, int) {
	return e.cli(append([]string{"playbook", "resume", "--state", e.db, "--token", token}, answer...)...)
}

func (e *stepsEnv) count() string {
	b, _ := os.ReadFile(filepath.Join(e.dir, "count"))
	return strings.Join(strings.Fields(string(b)), ",")
}

func (e *stepsEnv) prompt(step string) string {
	b, _ := os.ReadFile(filepath.Join(e.dir, "prompt-"+step+".txt"))
	return string(b)
}

func statuses(env stepsEnvelope) string {
	var out []string
	for _, s := range env.Output.Steps {
		out = append(out, s.Step+"="+s.Status)
	}
	return strings.Join(out, " ")
}

// TestStepsRunElicitResume: a 3-step playbook with a branch and an @elicit runs step by step
// with a scripted agent CLI: the branch reads step 1's typed output, the elicitation parks the
// run, a wrong answer is refused with the token kept, the answer resumes it from another process
// without re-running a step, each step's prompt holds the system prompt, the inputs and every
// prior output, the json artifact is written, and the token cannot be used again.
func TestStepsRunElicitResume(t *testing.T) {
	e := newStepsEnv(t, map[string]string{"1": "major\n", "2a": "- drop the v1 API\n", "3": "```json\n{\"notes\": \"1.2 drops the v1 API\"}\n```\n"})
	env, code := e.run(`{"version": "1.2", "tone": "formal"}`)
	if code != 0 || !env.OK || env.Status != "needs_input" || env.RequiresInput == nil {
		t.Fatalf("run: exit %d %+v", code, env)
	}
	ri := env.RequiresInput
	if ri.Step != "3" || ri.Kind != "select" || ri.Prompt != "Where are the notes of 1.2 published?" || strings.Join(ri.Options, ",") != "blog,changelog" || !strings.HasPrefix(ri.ResumeToken, "rt_") {
		t.Fatalf("requiresInput %+v", ri)
	}
	if got := statuses(env); got != "1=ok 2=ok 2a=ok 2b=skipped 3=pending" {
		t.Fatalf("steps %s", got)
	}
	if env.Output.Outputs["kind"] != "major" || e.count() != "1,2a" {
		t.Fatalf("outputs %v, count %s", env.Output.Outputs, e.count())
	}
	if _, err := os.Stat(e.art); !os.IsNotExist(err) {
		t.Fatalf("an artifact before the run ended: %v", err)
	}

	// A wrong answer is refused, and the token stays valid.
	bad, code := e.resume(ri.ResumeToken, "--answer", "tv")
	if code != 1 || bad.OK || bad.Error.Kind != "invalid" || !strings.Contains(bad.Error.Message, `"tv" is not one of the options: blog, changelog`) {
		t.Fatalf("wrong answer: exit %d %+v", code, bad.Error)
	}
	wrong, code := e.resume("rt_wrong", "--answer", "blog")
	if code != 1 || wrong.Error.Kind != "token" {
		t.Fatalf("wrong token: exit %d %+v", code, wrong.Error)
	}

	done, code := e.resume(ri.ResumeToken, "--answer", "Blog")
	if code != 0 || !done.OK || done.Status != "ok" {
		t.Fatalf("resume: exit %d %+v", code, done)
	}
	if e.count() != "1,2a,3" {
		t.Fatalf("count %s: a step ran again, or step 3 did not run", e.count())
	}
	if got := statuses(done); got != "1=ok 2=ok 2a=ok 2b=skipped 3=ok" {
		t.Fatalf("steps %s", got)
	}
	p1, p2, p3 := e.prompt("1"), e.prompt("2a"), e.prompt("3")
	if !strings.Contains(p1, "You are a release manager.") || !strings.Contains(p1, "Classify the changes of 1.2 for users.") || !strings.Contains(p1, "exactly one of: major, minor") {
		t.Errorf("prompt 1:\n%s", p1)
	}
	if !strings.Contains(p2, "### STEP 1: Classify\n\nmajor") || !strings.Contains(p2, "List the breaking changes of 1.2.") {
		t.Errorf("prompt 2a lacks step 1's output:\n%s", p2)
	}
	for _, want := range []string{"You are a release manager.", "### STEP 1: Classify\n\nmajor", "### STEP 2a: Breaking changes\n\n- drop the v1 API", "Asked \"Where are the notes of 1.2 published?\", the person answered: blog", "Write the notes for the blog in a formal tone."} {
		if !strings.Contains(p3, want) {
			t.Errorf("prompt 3 lacks %q:\n%s", want, p3)
		}
	}
	if done.Output.Outputs["notes"] != `{"notes": "1.2 drops the v1 API"}` || done.Output.Outputs["__elicit_step_3"] != "blog" {
		t.Errorf("outputs %v", done.Output.Outputs)
	}
	art, err := os.ReadFile(filepath.Join(e.art, "artifact.json"))
	var v map[string]string
	if err != nil || json.Unmarshal(art, &v) != nil || v["notes"] != "1.2 drops the v1 API" || done.Output.Artifact.Path != filepath.Join(e.art, "artifact.json") {
		t.Fatalf("artifact %q %v %+v", art, err, done.Output.Artifact)
	}

	again, code := e.resume(ri.ResumeToken, "--answer", "blog")
	if code != 1 || again.OK || again.Error.Kind != "token" || e.count() != "1,2a,3" {
		t.Fatalf("a used token: exit %d %+v, count %s", code, again.Error, e.count())
	}
}

// TestStepsBranchNotTaken: the else arm runs when the typed output does not match, and a
// confirm is answered with --deny (no) and the run goes on.
func TestStepsBranchNotTaken(t *testing.T) {
	e := newStepsEnv(t, map[string]string{"1": "`Minor`.", "3": `{"n": 1}`})
	env, code := e.run(`{"version": "2.0", "tone": "casual", "audience": "admins"}`)
	if code != 0 || env.Status != "needs_input" {
		t.Fatalf("run: exit %d %+v", code, env)
	}
	if got := statuses(env); got != "1=ok 2=ok 2a=skipped 2b=ok 3=pending" || env.Output.Outputs["kind"] != "minor" || e.count() != "1,2b" {
		t.Fatalf("steps %s, outputs %v, count %s", got, env.Output.Outputs, e.count())
	}
	if p := e.prompt("2b"); !strings.Contains(p, "List the highlights of 2.0.") || !strings.Contains(e.prompt("1"), "for admins") {
		t.Fatalf("prompt 2b:\n%s", p)
	}
	deny, code := e.resume(env.RequiresInput.ResumeToken, "--deny")
	if code != 1 || !strings.Contains(deny.Error.Message, "a select") && !strings.Contains(deny.Error.Message, "not one of the options") {
		t.Fatalf("--deny on a select: exit %d %+v", code, deny.Error)
	}
	cancel, code := e.resume(env.RequiresInput.ResumeToken, "--cancel")
	if code != 0 || !cancel.OK || cancel.Status != "cancelled" || e.count() != "1,2b" {
		t.Fatalf("cancel: exit %d %+v, count %s", code, cancel, e.count())
	}
}
