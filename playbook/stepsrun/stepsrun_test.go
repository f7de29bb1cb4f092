package stepsrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/steps"
	"github.com/autonomyhq/autonomy/substrates/local/store"
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
