package stepsrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/steps"
)

func TestCapture(t *testing.T) {
	enum := &steps.Output{Var: ir.String{Value: "v"}, Type: steps.Enum, Options: []string{"approve", "reject"}}
	cases := []struct {
		o         *steps.Output
		msg, want string
		err       string
	}{
		{&steps.Output{Type: steps.String}, "  free text \n", "free text", ""},
		{enum, "`Approve`.", "approve", ""},
		{enum, "maybe", "", `the agent answered "maybe", which is not one of approve, reject`},
		{&steps.Output{Type: steps.Number}, " 42.5\n", "42.5", ""},
		{&steps.Output{Type: steps.Number}, "forty", "", `declares a number, and the agent answered "forty"`},
		{&steps.Output{Type: steps.Boolean}, "True", "true", ""},
		{&steps.Output{Type: steps.Boolean}, "yes", "", "declares a boolean"},
		{&steps.Output{Type: "json"}, "```json\n[1, 2]\n```", "[1, 2]", ""},
		{&steps.Output{Type: "json"}, "[1, 2", "", "declares json"},
		{&steps.Output{Type: steps.String, Extract: "verdict"}, `{"verdict": "ship", "why": "tests pass"}`, "ship", ""},
		{&steps.Output{Type: steps.Number, Extract: "n"}, "```\n{\"n\": 3}\n```", "3", ""},
		{&steps.Output{Type: steps.String, Extract: "verdict"}, `{"other": 1}`, "", `has no "verdict" member`},
		{&steps.Output{Type: steps.String, Extract: "verdict"}, `ship`, "", `extract "verdict" needs the final message to be a JSON object`},
		{&steps.Output{Type: enum.Type, Options: enum.Options, Extract: "v"}, `{"v": "Reject"}`, "reject", ""},
	}
	for _, c := range cases {
		got, err := capture(c.o, c.msg)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want %q", c.msg, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %q %v, want %q", c.msg, got, err, c.want)
		}
	}
}

// instant is an agent that answers at once: what is measured is the runtime's own work.
type instant struct{ n int }

func (a *instant) Invoke(_ context.Context, step, prompt string) (string, error) {
	a.n++
	return "output of " + step, nil
}

// BenchmarkStepOverhead is the runtime's cost per step, the agent excluded: composing the prompt
// from the accumulated outputs, and the two SQLite checkpoints around the invocation, over a
// 20-step playbook.
func BenchmarkStepOverhead(b *testing.B) {
	const n = 20
	var src strings.Builder
	src.WriteString("# Bench\n\n## SYSTEM\n\nYou are fast.\n\n## INPUTS\n\n- `topic` (string: go)\n\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&src, "## STEP %d: Step %d\n\nWrite about {{topic}}, part %d.\n\n@output(out%d)\n\n", i, i, i, i)
	}
	dir := b.TempDir()
	file := filepath.Join(dir, "bench.md")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	a := &instant{}
	r := &Runner{Agent: a, Store: st}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		env := r.Run(context.Background(), Request{File: file})
		if !env.OK || env.Status != StatusOK || len(env.Output.Steps) != n {
			b.Fatalf("%+v", env)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/step")
}

const confirmBook = "# Ship\n\n## STEP 1: Build\n\nBuild it.\n\n## STEP 2: Ask\n\n@elicit(confirm, \"Ship it?\")\n\n" +
	"## STEP 3: Ship\n\n```if __elicit_step_2 == \"yes\"```\n\n### STEP 3a: Release\n\nRelease it.\n\n```else```\n\n### STEP 3b: Hold\n\nHold it.\n\n```endif```\n"

func newRun(t *testing.T) (*Runner, *instant, string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "ship.md")
	if err := os.WriteFile(file, []byte(confirmBook), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a := &instant{}
	return &Runner{Agent: a, Store: st}, a, file
}

// TestConfirmBranches: a confirm is answered yes or no, and the branch after it reads the answer.
func TestConfirmBranches(t *testing.T) {
	for _, c := range []struct {
		answer Answer
		want   string
	}{
		{Answer{Approve: true}, "1=ok 2=ok 3=ok 3a=ok 3b=skipped"},
		{Answer{Deny: true}, "1=ok 2=ok 3=ok 3a=skipped 3b=ok"},
		{Answer{Text: "No"}, "1=ok 2=ok 3=ok 3a=skipped 3b=ok"},
	} {
		r, a, file := newRun(t)
		env := r.Run(context.Background(), Request{File: file})
		if env.Status != StatusNeedsInput || env.RequiresInput.Kind != "confirm" || strings.Join(env.RequiresInput.Options, ",") != "yes,no" {
			t.Fatalf("%+v", env)
		}
		env = r.Resume(context.Background(), env.RequiresInput.ResumeToken, c.answer)
		var got []string
		for _, s := range env.Output.Steps {
			got = append(got, s.Step+"="+s.Status)
		}
		if env.Status != StatusOK || strings.Join(got, " ") != c.want || a.n != 2 {
			t.Errorf("%+v: %s (%d invocations), want %s", c.answer, strings.Join(got, " "), a.n, c.want)
		}
	}
	r, _, file := newRun(t)
	env := r.Run(context.Background(), Request{File: file})
	if bad := r.Resume(context.Background(), env.RequiresInput.ResumeToken, Answer{Text: "perhaps"}); bad.OK || bad.Error.Kind != "invalid" || !strings.Contains(bad.Error.Message, "--approve or --deny") {
		t.Fatalf("%+v", bad.Error)
	}
	if ok := r.Resume(context.Background(), env.RequiresInput.ResumeToken, Answer{Text: "y"}); ok.Status != StatusOK {
		t.Fatalf("the token did not survive a refused answer: %+v", ok.Error)
	}
}

// TestResumeRace: two resumes of one token at once: exactly one continues the run.
func TestResumeRace(t *testing.T) {
	r, a, file := newRun(t)
	env := r.Run(context.Background(), Request{File: file})
	tok := env.RequiresInput.ResumeToken
	results := make(chan Envelope, 2)
	for i := 0; i < 2; i++ {
		go func() { results <- r.Resume(context.Background(), tok, Answer{Approve: true}) }()
	}
	won, lost := <-results, <-results
	if !won.OK {
		won, lost = lost, won
	}
	if won.Status != StatusOK || lost.OK || lost.Error.Kind != "token" {
		t.Fatalf("want one resumed, one refused: %+v / %+v", won, lost.Error)
	}
	if a.n != 2 {
		t.Fatalf("%d invocations, want 2 (build, release)", a.n)
	}
}

// TestCommandMessage: without a preset the final message is the command's stdout, and the
// prompt reaches its stdin with AUTONOMY_STEP set.
func TestCommandMessage(t *testing.T) {
	c := &Command{Argv: []string{"/bin/sh", "-c", `printf '%s:' "$AUTONOMY_STEP"; cat`}, Dir: t.TempDir()}
	msg, err := c.Invoke(context.Background(), "2a", "the prompt")
	if err != nil || msg != "2a:the prompt" {
		t.Fatalf("%q %v", msg, err)
	}
	if _, err := (&Command{Argv: []string{"/bin/sh", "-c", "echo no >&2; exit 3"}}).Invoke(context.Background(), "1", ""); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("a failing agent: %v", err)
	}
	if _, err := (&Command{Argv: []string{"x"}, Preset: "nope"}).Invoke(context.Background(), "1", ""); err == nil || !strings.Contains(err.Error(), `unknown agent preset "nope"`) {
		t.Fatalf("an unknown preset: %v", err)
	}
}

// BenchmarkResume is how long a resume takes to return its next envelope (the agent instant):
// redeeming the token, reading the state back and running the last step.
func BenchmarkResume(b *testing.B) {
	dir := b.TempDir()
	file := filepath.Join(dir, "ship.md")
	if err := os.WriteFile(file, []byte(confirmBook), 0o644); err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	r := &Runner{Agent: &instant{}, Store: st}
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		env := r.Run(ctx, Request{File: file})
		b.StartTimer()
		if env := r.Resume(ctx, env.RequiresInput.ResumeToken, Answer{Approve: true}); env.Status != StatusOK {
			b.Fatalf("%+v", env)
		}
	}
}
