//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/playbook/stepsrun"
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
if [ -f "$dir/slow-$step" ]; then sleep 30 & echo $! > "$dir/sleep.pid"; wait; fi
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
	if code != 1 || !strings.Contains(deny.Error.Message, "a select is answered with --answer OPTION") {
		t.Fatalf("--deny on a select: exit %d %+v", code, deny.Error)
	}
	cancel, code := e.resume(env.RequiresInput.ResumeToken, "--cancel")
	if code != 0 || !cancel.OK || cancel.Status != "cancelled" || e.count() != "1,2b" {
		t.Fatalf("cancel: exit %d %+v, count %s", code, cancel, e.count())
	}
}

// TestStepsInputs: defaults apply (seen above); a missing required input, an enum value not
// listed and an undeclared input are refused before anything runs, naming the input, where it is
// declared and the fix.
func TestStepsInputs(t *testing.T) {
	cases := []struct{ args, want string }{
		{`{"tone": "formal"}`, `release.md:11:4: the input "version" is required and has no default: give it with --args-json '{"version": "…"}'`},
		{`{"version": "1", "tone": "angry"}`, `release.md:12:4: the input "tone" is "angry", which is not one of formal, casual`},
		{`{"version": "1", "tone": "formal", "colour": "red"}`, `--args-json: the playbook declares no input colour (its inputs: version, tone, audience)`},
		{`[1]`, `--args-json is not a JSON object`},
	}
	for _, c := range cases {
		e := newStepsEnv(t, nil)
		env, code := e.run(c.args)
		if code != 1 || env.OK || env.Error.Kind != "invalid" || !strings.Contains(env.Error.Message, c.want) {
			t.Errorf("%s: exit %d %+v; want %q", c.args, code, env.Error, c.want)
		}
		if e.count() != "" {
			t.Errorf("%s: the agent ran: %s", c.args, e.count())
		}
	}
}

// TestStepsOutputTyping: an answer that does not fit its @output type fails the step, naming
// the step and the directive's position; nothing after it runs.
func TestStepsOutputTyping(t *testing.T) {
	e := newStepsEnv(t, map[string]string{"1": "maybe"})
	env, code := e.run(`{"version": "1", "tone": "formal"}`)
	if code != 1 || env.OK || env.Error.Step != "1" || !strings.Contains(env.Error.Message, `release.md:19:9: step 1: @output(kind): the agent answered "maybe", which is not one of major, minor`) {
		t.Fatalf("exit %d %+v", code, env.Error)
	}
	if got := statuses(env); got != "1=failed" || e.count() != "1" {
		t.Fatalf("steps %s, count %s", got, e.count())
	}
	// The json output of step 3 is checked too.
	e = newStepsEnv(t, map[string]string{"1": "minor", "3": "here are the notes"})
	env, _ = e.run(`{"version": "1", "tone": "formal"}`)
	env, code = e.resume(env.RequiresInput.ResumeToken, "--answer", "changelog")
	if code != 1 || !strings.Contains(env.Error.Message, "step 3: @output(notes): declares json, and the agent's answer is not JSON") {
		t.Fatalf("exit %d %+v", code, env.Error)
	}
}

// TestStepsCrashResume: the autonomy process is killed (SIGKILL) while step 2a runs; running the
// same command again continues at 2a, and step 1, completed, does not run again.
func TestStepsCrashResume(t *testing.T) {
	// A killed run leaves its step's temporary folder (it never reaches its clean-up): in the
	// test's own TMPDIR, removed with it, never in the machine's.
	t.Setenv("TMPDIR", t.TempDir())
	e := newStepsEnv(t, map[string]string{"1": "major", "3": `{"ok": true}`})
	if err := os.WriteFile(filepath.Join(e.dir, "crash-2a"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	args := `{"version": "1", "tone": "formal"}`
	if _, code := e.run(args); code != -1 && code != 137 {
		t.Fatalf("exit %d; the process was to be killed", code)
	}
	if e.count() != "1,2a" {
		t.Fatalf("count %s", e.count())
	}
	env, code := e.run(args)
	if code != 0 || env.Status != "needs_input" || e.count() != "1,2a,2a" {
		t.Fatalf("rerun: exit %d %+v, count %s", code, env, e.count())
	}
	if got := statuses(env); got != "1=ok 2=ok 2a=ok 2b=skipped 3=pending" {
		t.Fatalf("steps %s", got)
	}
	// Killed again during step 3, after the answer: running it again continues at step 3 with
	// the answer, and asks nothing.
	if err := os.WriteFile(filepath.Join(e.dir, "crash-3"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, code := e.resume(env.RequiresInput.ResumeToken, "--answer", "blog"); code != -1 && code != 137 {
		t.Fatalf("resume: exit %d; the process was to be killed", code)
	}
	done, code := e.run(args)
	if code != 0 || done.Status != "ok" || e.count() != "1,2a,2a,3,3" || done.Output.Outputs["__elicit_step_3"] != "blog" {
		t.Fatalf("rerun after the answer: exit %d %+v, count %s", code, done, e.count())
	}
	if !strings.Contains(e.prompt("3"), "the person answered: blog") {
		t.Fatalf("prompt 3:\n%s", e.prompt("3"))
	}
	// Ended, the run leaves no checkpoint: the same command starts a new run.
	if env, _ := e.run(args); env.Status != "needs_input" || e.count() != "1,2a,2a,3,3,1,2a" {
		t.Fatalf("a new run: %+v, count %s", env, e.count())
	}
}

// TestStepsArtifactChecked: a json artifact that is not JSON fails the run, at ## ARTIFACTS.
func TestStepsArtifactChecked(t *testing.T) {
	src, _ := os.ReadFile("testdata/steps/release.md")
	e := newStepsEnv(t, map[string]string{"1": "minor", "3": `"x"`, "2b": "not json"})
	// Step 3's output is JSON; make the last output the 2b prose by dropping step 3.
	cut := strings.Replace(string(src), string(src[strings.Index(string(src), "## STEP 3"):strings.Index(string(src), "## ARTIFACTS")]), "", 1)
	if err := os.WriteFile(e.book, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	env, code := e.run(`{"version": "1", "tone": "formal"}`)
	if code != 1 || !strings.Contains(env.Error.Message, "release.md:41:7: the artifact is declared json, and the last step's output is not JSON: not json") {
		t.Fatalf("exit %d %+v", code, env.Error)
	}
	if _, err := os.Stat(e.art); !os.IsNotExist(err) {
		t.Fatalf("an artifact was written: %v", err)
	}
}

// TestStepsBadPlaybooks: what the runtime refuses before anything runs, each at its position.
func TestStepsBadPlaybooks(t *testing.T) {
	t.Parallel()
	cases := []struct{ body, want string }{
		{"# T\n\n## STEP 1: A\n\nDo it.\n\n@output(x: integr)\n", `:7:12: unknown @output type "integr"`},
		{"# T\n\n## STEP 1: A\n\n@output(x: enum())\n", `:5:12: the enum @output "x" lists no values`},
		{"# T\n\n## STEP 1: A\n\n@output(x: number(1, 2))\n", `:5:12: the @output type number takes no values`},
		{"# T\n\n## STEP 1: A\n\n@tool(gh, list_issues)\n", `:5:1: step 1: @tool is not supported by this runtime`},
		{"# T\n\n## STEP 1: A\n\n  @prompt(library:x)\n", `:5:3: step 1: @prompt is not supported by this runtime`},
		{"# T\n\nno steps\n", `:1:1: the playbook has no step`},
		{"# T\n\n## INPUTS\n\n- `a` (string)\n- `a` (string)\n\n## STEP 1: A\n\nx\n", `:6:4: duplicate input "a"`},
	}
	for _, c := range cases {
		e := newStepsEnv(t, nil)
		if err := os.WriteFile(e.book, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		env, code := e.run(`{}`)
		if code != 1 || env.OK || env.Error.Kind != "invalid" || !strings.Contains(strings.Join(env.Error.Diagnostics, "\n"), e.book+c.want) {
			t.Errorf("%q: exit %d %+v; want %s", c.body, code, env.Error, c.want)
		}
		if e.count() != "" {
			t.Errorf("%q: the agent ran", c.body)
		}
	}
}

// TestStepsUsage: a bad agent choice is a usage error (exit 2) before anything runs, and --state
// may name a directory.
func TestStepsUsage(t *testing.T) {
	e := newStepsEnv(t, map[string]string{"1": "minor", "3": `{"a": 1}`})
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--agent", "gpt"}, `--agent "gpt": the presets are [claude codex]`},
		{[]string{"--agent", "codex", "--sandbox", "off"}, `--sandbox is workspace or none, not "off"`},
		{[]string{"--agent-argv", "agent --flag"}, "--agent-argv must be a JSON list of words"},
		{[]string{"--agent-argv", "[]"}, "--agent-argv must be a JSON list of words"},
	}
	for _, c := range cases {
		argv := append([]string{"playbook", "run", e.book, "--state", e.db, "--args-json", `{"version": "1", "tone": "formal"}`}, c.args...)
		out, errOut, code := cli(t, []string{"PATH=/nonexistent"}, argv...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", c.args, code, out, errOut, c.want)
		}
	}
	_, errOut, code := cli(t, []string{"PATH=/nonexistent"}, "playbook", "run", e.book, "--state", e.db, "--agent", "codex")
	if code != 2 || !strings.Contains(errOut, "the agent preset codex needs codex, which is not on PATH: install it with npm install --global @openai/codex@") {
		t.Errorf("a preset not installed: exit %d %s", code, errOut)
	}
	if e.count() != "" {
		t.Fatalf("the agent ran: %s", e.count())
	}
	stateDir := t.TempDir()
	env, code := e.cli("playbook", "run", e.book, "--state", stateDir, "--workspace", e.dir, "--agent-argv", `["`+filepath.Join(e.dir, "agent")+`"]`, "--args-json", `{"version": "1", "tone": "formal"}`)
	if code != 0 || env.Status != "needs_input" {
		t.Fatalf("--state DIR: exit %d %+v", code, env)
	}
	if _, err := os.Stat(filepath.Join(stateDir, "playbooks.db")); err != nil {
		t.Fatal(err)
	}
	if env, code := e.cli("playbook", "resume", "--state", stateDir, "--token", env.RequiresInput.ResumeToken, "--answer", "blog"); code != 0 || env.Status != "ok" {
		t.Fatalf("resume --state DIR: exit %d %+v", code, env)
	}
}

// TestResumeAnswerOnWorkflow: --answer on a workflow's approval token is refused and spends
// nothing: the token still approves it; --approve on a step playbook's select is refused the same.
func TestResumeAnswerOnWorkflow(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	out, _, code := cli(t, nil, "playbook", "run", "--state", db, "--pipeline", "cli echo hi | approve 'Go?' | cli true")
	var env struct{ RequiresApproval struct{ ResumeToken string } }
	if code != 0 || json.Unmarshal([]byte(out), &env) != nil {
		t.Fatalf("run: %d %s", code, out)
	}
	tok := env.RequiresApproval.ResumeToken
	out, _, code = cli(t, nil, "playbook", "resume", "--state", db, "--token", tok, "--answer", "yes")
	if code != 1 || !strings.Contains(out, "this token is not one (a workflow's approval takes --approve or --deny)") {
		t.Fatalf("--answer on an approval: %d %s", code, out)
	}
	if out, _, code = cli(t, nil, "playbook", "resume", "--state", db, "--token", tok, "--approve"); code != 0 || !strings.Contains(out, `"status": "ok"`) {
		t.Fatalf("the token was spent: %d %s", code, out)
	}

	e := newStepsEnv(t, map[string]string{"1": "minor", "3": `{"a": 1}`})
	run, _ := e.run(`{"version": "1", "tone": "formal"}`)
	if bad, code := e.resume(run.RequiresInput.ResumeToken, "--approve"); code != 1 || !strings.Contains(bad.Error.Message, "step 3: a select is answered with --answer OPTION (one of: blog, changelog), not --approve or --deny") {
		t.Fatalf("--approve on a select: %d %+v", code, bad.Error)
	}
	if done, code := e.resume(run.RequiresInput.ResumeToken, "--answer", "blog"); code != 0 || done.Status != "ok" {
		t.Fatalf("the token was spent: %d %+v", code, done.Error)
	}
}

// TestStepsResumeOverrides: a resume may name the playbook the paused run must have been started
// with (a changed or other playbook is refused, the token kept), and the agent that runs from
// now on (its words replace those saved with the pause, which whoever holds the saved state could
// have rewritten), its workspace and its artifacts directory.
func TestStepsResumeOverrides(t *testing.T) {
	e := newStepsEnv(t, map[string]string{"1": "major\n", "2a": "- drop the v1 API\n", "3": `{"notes": "n"}`})
	env, code := e.run(`{"version": "1.2", "tone": "formal"}`)
	if code != 0 || env.RequiresInput == nil {
		t.Fatalf("run: exit %d %+v", code, env)
	}
	token := env.RequiresInput.ResumeToken
	other := filepath.Join(e.dir, "other.md")
	src, _ := os.ReadFile(e.book)
	if err := os.WriteFile(other, append(src, []byte("\nA change.\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	bad, code := e.resume(token, "--answer", "blog", "--playbook", other)
	if code != 1 || bad.Error == nil || !strings.Contains(bad.Error.Message, "was not started with the playbook "+other) {
		t.Fatalf("another playbook: exit %d %+v", code, bad.Error)
	}
	// The agent of the resume: a copy that leaves a mark, in another workspace.
	ws, arts := t.TempDir(), t.TempDir()
	agent2 := filepath.Join(e.dir, "agent2")
	if err := os.WriteFile(agent2, []byte("#!/bin/sh\ntouch \"$(dirname \"$0\")/agent2-ran\"; pwd > \"$(dirname \"$0\")/agent2-pwd\"\nexec \"$(dirname \"$0\")/agent\" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	done, code := e.resume(token, "--answer", "blog", "--playbook", e.book, "--agent-argv", `["`+agent2+`"]`, "--workspace", ws, "--artifacts-dir", arts)
	if code != 0 || done.Status != "ok" {
		t.Fatalf("resume: exit %d %+v", code, done.Error)
	}
	pwd, err := os.ReadFile(filepath.Join(e.dir, "agent2-pwd"))
	if err != nil || strings.TrimSpace(string(pwd)) != ws {
		t.Errorf("the resumed step ran the saved agent, or elsewhere: %v %q", err, pwd)
	}
	if _, err := os.Stat(filepath.Join(arts, "artifact.json")); err != nil {
		t.Errorf("the artifact is not in the new directory: %v", err)
	}
}

// TestStepsPauseFile: --pause-file writes the pause a run ends waiting at (the hash of its token
// and its state), on run and on a resume that asks again, so that a trusted job can answer it
// without opening the run's database; a run that ends ok writes none.
func TestStepsPauseFile(t *testing.T) {
	e := newStepsEnv(t, nil)
	book := filepath.Join(e.dir, "two.md")
	if err := os.WriteFile(book, []byte("# Two questions\n\nAsk twice.\n\n## STEP 1: First\n\n@elicit(input, \"Who?\")\n\nSay hello.\n\n"+
		"## STEP 2: Second\n\n@elicit(confirm, \"Sure?\")\n\nSay bye.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	agent := `["` + filepath.Join(e.dir, "agent") + `"]`
	read := func(path string) stepsrun.Pause {
		t.Helper()
		var p stepsrun.Pause
		data, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(data, &p) != nil || len(p.State) == 0 {
			t.Fatalf("%s: %v %s", path, err, data)
		}
		return p
	}
	p1 := filepath.Join(e.dir, "p1.json")
	first, code := e.cli("playbook", "run", book, "--state", e.db, "--workspace", e.dir, "--agent-argv", agent, "--pause-file", p1)
	if code != 0 || first.Status != "needs_input" || first.RequiresInput.Step != "1" {
		t.Fatalf("run: exit %d %+v", code, first)
	}
	if got := read(p1); got.TokenHash != playproto.HashToken(first.RequiresInput.ResumeToken) {
		t.Errorf("pause 1 is under %s, not the hash of the envelope's token", got.TokenHash)
	}
	p2 := filepath.Join(e.dir, "p2.json")
	second, code := e.resume(first.RequiresInput.ResumeToken, "--answer", "Ada", "--pause-file", p2)
	if code != 0 || second.Status != "needs_input" || second.RequiresInput.Step != "2" {
		t.Fatalf("resume 1: exit %d %+v", code, second)
	}
	if got := read(p2); got.TokenHash != playproto.HashToken(second.RequiresInput.ResumeToken) || !strings.Contains(string(got.State), "Ada") {
		t.Errorf("pause 2: %+v", got)
	}
	p3 := filepath.Join(e.dir, "p3.json")
	done, code := e.resume(second.RequiresInput.ResumeToken, "--approve", "--pause-file", p3)
	if code != 0 || done.Status != "ok" {
		t.Fatalf("resume 2: exit %d %+v", code, done)
	}
	if _, err := os.Stat(p3); !os.IsNotExist(err) {
		t.Errorf("a finished run wrote a pause file: %v", err)
	}
}
