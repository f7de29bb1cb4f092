package stepsrun

import (
	"context"
	"errors"
	"testing"
)

// stopAt is an agent that fails (the run stops) at one step and answers the others.
type stopAt struct {
	step string
	ran  []string
}

func (a *stopAt) Invoke(_ context.Context, step, _ string) (string, error) {
	if step == a.step {
		a.step = ""
		return "", errors.New("the runner died")
	}
	a.ran = append(a.ran, step)
	return "output of " + step, nil
}

// TestSessionCheckpointKept: a session's run keeps its checkpoint when it parks and when it
// finishes (its runner drops it with the session), and NextStep names where it continues: the
// step that was running, the one waiting for a person, "" once every step is recorded. Running it
// again after the end runs nothing again.
func TestSessionCheckpointKept(t *testing.T) {
	r, _, file := newRun(t)
	a := &stopAt{step: "1"}
	r.Agent = a
	ctx := context.Background()
	req := Request{File: file, Session: "s1"}
	if env := r.Run(ctx, req); env.OK {
		t.Fatalf("the run did not stop at step 1: %+v", env)
	}
	raw, ok, err := r.Store.GetState(ctx, "steps:s1")
	if err != nil || !ok || NextStep(raw) != "1" {
		t.Fatalf("after a stop in step 1: next %q (%v %v), want the running step 1", NextStep(raw), ok, err)
	}
	env := r.Run(ctx, req)
	if env.Status != StatusNeedsInput {
		t.Fatalf("%+v", env)
	}
	if raw, ok, _ = r.Store.GetState(ctx, "steps:s1"); !ok || NextStep(raw) != "2" {
		t.Fatalf("parked: checkpoint %v, next %q, want 2 (waiting)", ok, NextStep(raw))
	}
	// The runner died before it parked the session: running it again asks again, with a new
	// token, and runs nothing before it again.
	again := r.Run(ctx, req)
	if again.Status != StatusNeedsInput || again.RequiresInput.ResumeToken == env.RequiresInput.ResumeToken || len(a.ran) != 1 {
		t.Fatalf("asked again: %+v, ran %v", again, a.ran)
	}
	done := r.Resume(ctx, again.RequiresInput.ResumeToken, Answer{Approve: true})
	if done.Status != StatusOK {
		t.Fatalf("%+v", done.Error)
	}
	if raw, ok, _ = r.Store.GetState(ctx, "steps:s1"); !ok || NextStep(raw) != "" {
		t.Fatalf("finished: checkpoint %v, next %q", ok, NextStep(raw))
	}
	if env := r.Run(ctx, req); env.Status != StatusOK || len(a.ran) != 2 || len(env.Output.Steps) != len(done.Output.Steps) {
		t.Fatalf("run again after the end: %+v, ran %v", env, a.ran)
	}
	if NextStep([]byte(`{"kind": "workflow"}`)) != "" || NextStep([]byte("{")) != "" {
		t.Fatal("NextStep of what is no step playbook's state")
	}
}
