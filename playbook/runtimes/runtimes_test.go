package runtimes

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/playbook/engine"
	"github.com/autonomyhq/autonomy/playbook/stepsrun"
)

type done struct{}

func (done) Invoke(context.Context, string, string) (string, error) { return "done", nil }

// paused runs src (a step playbook when steps, else a workflow) to its pause and returns the
// paused state, as a runner finds it in the store under the token's hash.
func paused(t *testing.T, src string, steps bool) []byte {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "book")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	var token string
	if steps {
		env := (&stepsrun.Runner{Agent: done{}, Store: st}).Run(ctx, stepsrun.Request{File: file})
		if env.Status != playproto.StatusNeedsInput {
			t.Fatalf("%+v", env)
		}
		token = env.RequiresInput.ResumeToken
	} else {
		env := (&engine.Engine{Pauses: st}).Run(ctx, engine.Request{Pipeline: file, Workspace: dir})
		if env.Status != playproto.StatusNeedsApproval {
			t.Fatalf("%+v", env)
		}
		token = env.RequiresApproval.ResumeToken
	}
	raw, _, ok, err := st.TakePause(ctx, playproto.HashToken(token))
	if err != nil || !ok {
		t.Fatalf("no pause under the token's hash: %v", err)
	}
	return raw
}

// Host names the step a paused run waits at, for either runtime, answers a step playbook's
// elicitation (refusing an answer that does not fit), and says where its checkpoint continues.
func TestHost(t *testing.T) {
	var h Host
	flow := paused(t, "name: f\nsteps:\n  - id: first\n    command: cli true\n  - id: gate\n    command: cli true\n    approval: required\n", false)
	if got := h.PausedStep(flow); got != "gate" {
		t.Errorf("a workflow's paused step: %q, want gate", got)
	}
	book := paused(t, "# Ask\n\n## STEP 1: Build\n\nBuild it.\n\n## STEP 2: Ask\n\n@elicit(select, \"Which?\", \"a\", \"b\")\n", true)
	if got := h.PausedStep(book); got != "2" {
		t.Errorf("a step playbook's paused step: %q, want 2", got)
	}
	if got := h.NextStep(book); got != "2" {
		t.Errorf("a step playbook's next step: %q, want 2", got)
	}
	if _, err := h.Answer(book, playproto.Answer{Text: "c"}); err == nil {
		t.Error("an answer outside the options was taken")
	}
	next, err := h.Answer(book, playproto.Answer{Text: "b"})
	if err != nil || !playproto.IsStepsState(next) || h.PausedStep(next) != "2" {
		t.Errorf("answer b: %v; the state names step %q", err, h.PausedStep(next))
	}
	if _, ok, err := h.Weave(t.TempDir(), ".autonomy", playproto.Actor{Name: "a"}, "skill", time.Now()); ok || err != nil {
		t.Errorf("an installation without a weaving config: ok %v, %v", ok, err)
	}
}
