//go:build unix

package local

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// A step session whose supervisor died is not continued by a reconciliation from a shell where a
// launch of it would be refused (no key, no opt-in): it is held, saying why, for a reconciliation
// where the key is. It was continued, then failed for good for want of the key (attack23).
func TestAStepSessionIsNotContinuedWhereItsLaunchWouldBeRefused(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, resumeFleet, false)
	ctx := context.Background()
	r := newRunner(t, dir, Options{Exe: "/bin/true", Env: keyless(t)})
	dead := deadProcess(t)
	var s store.Session
	if err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		s = store.Session{Actor: "writer", Kind: "agent", Status: ir.Running, Origin: "operator", PID: dead.pid, PIDStart: dead.start,
			SupervisorPID: dead.pid, SupervisorStart: dead.start, StartedAt: time.Now(), CreatedAt: time.Now().Add(-time.Hour)}
		return tx.Insert(&s)
	}); err != nil {
		t.Fatal(err)
	}
	got, _, err := r.Get(ctx, s.ID)
	r.Wait()
	if err != nil || got.Status != ir.Running {
		t.Fatalf("reconciled from a keyless shell: %s %q, %v", got.Status, got.Reason, err)
	}
	if got, _, _ = r.Get(ctx, s.ID); got.Status != ir.Running {
		t.Fatalf("after the reconciliation: %s %q", got.Status, got.Reason)
	}
	evs, _ := r.Store.Events(ctx, s.ID, 0)
	var held string
	for _, e := range evs {
		if e.Kind == heldEvent {
			held = e.Message
		}
	}
	if !strings.Contains(held, "would be refused here: no OPENAI_API_KEY") {
		t.Errorf("held event %q", held)
	}
}

// An answer given from a shell whose AUTONOMY_LOCAL_AGENT is set continues a step playbook's run
// with the agent its checkpoint saved, whose key is then what counts: without it the answer is
// refused and kept (the token still valid). It was accepted, and the session then failed for
// want of the key, the answer lost (attack23).
func TestAnAnswerIsCheckedForTheAgentItContinues(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, resumeFleet, false)
	ctx := context.Background()
	env := append(keyless(t), AgentEnv+`=["/bin/true"]`, "PATH="+fakeProgram(t, "codex", "#!/bin/sh\nexit 0\n")+":/usr/bin:/bin")
	r := newRunner(t, dir, Options{Exe: "/bin/true", Env: env})
	hash := playproto.HashToken("rt_steps")
	p := parkedSteps(t, r, "writer", "rt_steps")
	_, err := r.Respond(ctx, p.ID, "rt_steps", playproto.Answer{Approve: true}, "")
	r.Wait()
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "no OPENAI_API_KEY") || !strings.Contains(err.Error(), "the token is still valid") {
		t.Fatalf("the answer: %v", err)
	}
	if got, _, _ := r.Get(ctx, p.ID); got.Status != ir.Paused || got.TokenHash != hash {
		t.Errorf("after the refused answer: %s %q, token kept %v", got.Status, got.Reason, got.TokenHash == hash)
	}
}

// An answer to a step session whose behavior or launcher config was edited since is refused and
// kept, the token still valid: accepted, it continued the session into a failure for good, the
// answer lost (attack24).
func TestAnAnswerToAnEditedSessionIsRefusedAndKept(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, resumeFleet, false)
	ctx := context.Background()
	env := []string{"PATH=" + fakeProgram(t, "codex", "#!/bin/sh\nexit 0\n") + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "OPENAI_API_KEY=k", "OPENAI_BASE_URL=http://127.0.0.1:9"}
	for i, file := range []string{".autonomy/playbooks/two.md", ActorPath("writer")} {
		restore := appendTo(t, dir, file, "\n")
		r := newRunner(t, dir, Options{Exe: "/bin/true", Env: env})
		token := fmt.Sprintf("rt_steps%d", i)
		hash := playproto.HashToken(token)
		p := parkedSteps(t, r, "writer", token)
		_, err := r.Respond(ctx, p.ID, token, playproto.Answer{Approve: true}, "")
		r.Wait()
		var refused *RefusedError
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), "was edited after autonomy") || !strings.Contains(err.Error(), "the token is still valid") {
			t.Errorf("%s edited: the answer: %v", file, err)
		}
		if got, _, _ := r.Get(ctx, p.ID); got.Status != ir.Paused || got.TokenHash != hash {
			t.Errorf("%s edited: after the refused answer: %s %q", file, got.Status, got.Reason)
		}
		restore()
	}
}
