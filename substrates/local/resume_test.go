//go:build unix

package local

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

var resumeFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  writer:
    behavior: playbooks/two.md
    triggers: [{ dispatch: true }]
  flow:
    behavior: flows/one.yml
    triggers: [{ dispatch: true }]
  probe:
    behavior: scripts/probe.sh
    capabilities: [agent:list]
    triggers: [{ dispatch: true }]
`,
	files: map[string]string{
		"playbooks/two.md": "# Two\n\n## STEP 1: One\n\nDo one.\n\n## STEP 2: Two\n\nDo two.\n",
		"flows/one.yml":    "name: one\nsteps:\n  - id: one\n    command: cli true\n",
		"scripts/probe.sh": "#!/bin/sh\n" + scriptDone,
	},
}

// TestReconcileContinuesOnlySteps: of the sessions whose supervisor and process died, a step
// playbook's is continued and a workflow playbook's fails orphaned (its engine keeps no
// checkpoint of a running run); a reconciliation from inside a session (agent:list) continues
// nothing, and leaves the step playbook's running for the operator, whose reconciliation
// continues it: one "resumed" event, and this process its supervisor.
func TestReconcileContinuesOnlySteps(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, resumeFleet, false)
	// The continued run's process: any command that exits without an envelope will do, the
	// claim is what is tested here (the run itself: cmd/autonomy's TestRunnerStepsResume*).
	r := newRunner(t, dir, Options{Exe: "/bin/true", Env: append(os.Environ(), AgentEnv+`=["/bin/true"]`)})
	ctx := context.Background()
	dead := deadProcess(t)
	orphan := func(actor string) store.Session {
		var s store.Session
		err := r.Store.Tx(ctx, func(tx *store.Tx) error {
			s = store.Session{Actor: actor, Kind: "agent", Status: ir.Running, Origin: "operator", PID: dead.pid, PIDStart: dead.start,
				SupervisorPID: dead.pid, SupervisorStart: dead.start, StartedAt: time.Now(), CreatedAt: time.Now().Add(-time.Hour)}
			return tx.Insert(&s)
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	steps, flow := orphan("writer"), orphan("flow")
	self := os.Getpid()
	selfStart, _ := proc.StartTime(self)
	var caller store.Session
	err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		caller = store.Session{Actor: "probe", Kind: "agent", Status: ir.Running, Origin: "operator", PID: self, PIDStart: selfStart,
			SupervisorPID: self, SupervisorStart: selfStart, StartedAt: time.Now(), CreatedAt: time.Now()}
		return tx.Insert(&caller)
	})
	if err != nil {
		t.Fatal(err)
	}
	agent := newRunner(t, dir, Options{Session: caller.ID})
	if _, err := agent.List(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := r.Store.Get(ctx, steps.ID); got.Status != ir.Running || got.SupervisorPID != dead.pid {
		t.Fatalf("a session's reconciliation took the step playbook over: %s, supervisor %d", got.Status, got.SupervisorPID)
	}
	if got, _, _ := r.Store.Get(ctx, flow.ID); got.Status != ir.Failed || !strings.Contains(got.Reason, "no runner was watching") {
		t.Fatalf("the workflow orphan: %s %q", got.Status, got.Reason)
	}
	got, _, err := r.Get(ctx, steps.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.SupervisorPID != self {
		t.Fatalf("after the operator's get: %s, supervisor %d, want this process %d", got.Status, got.SupervisorPID, self)
	}
	r.Wait()
	es, err := r.Store.Events(ctx, steps.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var resumed []string
	for _, e := range es {
		if e.Kind == resumedEvent {
			resumed = append(resumed, e.Message)
		}
	}
	if len(resumed) != 1 || !strings.Contains(resumed[0], "continued by the operator (continuation 1 of at most 3)") || !strings.Contains(resumed[0], "from its start (no step was checkpointed)") {
		t.Fatalf("resumed events: %q", resumed)
	}
}

// TestAProxiedStepSessionWaitsForTheKey: a step playbook session that reached its model through
// the proxy, whose supervisor died, is not continued by a reconciliation from an environment
// without the model's key (AUTONOMY_LOCAL_AGENT there changes nothing: the continuation runs
// the agent its checkpoint saved), which says so once in its events; one with the key continues
// it. An answer to such a parked session from there is refused likewise.
func TestAProxiedStepSessionWaitsForTheKey(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, resumeFleet, false)
	ctx := context.Background()
	noKey := append(os.Environ(), "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", AgentEnv+`=["/bin/true"]`)
	r := newRunner(t, dir, Options{Exe: "/bin/true", Env: noKey})
	dead := deadProcess(t)
	var s store.Session
	if err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		s = store.Session{Actor: "writer", Kind: "agent", Status: ir.Running, Origin: "operator", PID: dead.pid, PIDStart: dead.start,
			SupervisorPID: dead.pid, SupervisorStart: dead.start, StartedAt: time.Now(), CreatedAt: time.Now().Add(-time.Hour)}
		return tx.Insert(&s)
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.Store.PutUsage(ctx, store.Usage{Session: s.ID, Actor: "writer"}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, _, err := r.Get(ctx, s.ID)
		if err != nil || got.Status != ir.Running || got.SupervisorPID != dead.pid {
			t.Fatalf("reconciled without the key: %s, supervisor %d, %v", got.Status, got.SupervisorPID, err)
		}
	}
	es, err := r.Store.Events(ctx, s.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	for _, e := range es {
		if e.Kind == heldEvent {
			held = append(held, e.Message)
		}
	}
	if len(held) != 1 || !strings.Contains(held[0], "reached its model through the model proxy before") || !strings.Contains(held[0], "where the key is set") {
		t.Fatalf("held events: %q", held)
	}
	// Parked for an answer: the answer from there is refused, the override notwithstanding.
	hash := playproto.HashToken("rt_steps")
	var parkedS store.Session
	if err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		parkedS = store.Session{Actor: "writer", Kind: "agent", Status: ir.Paused, Origin: "operator", TokenHash: hash,
			Reason: inputRequired + "which one?", StartedAt: time.Now(), CreatedAt: time.Now()}
		return tx.Insert(&parkedS)
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.Store.SavePause(ctx, hash, parkedS.ID, []byte(`{"next": 0}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.Store.PutUsage(ctx, store.Usage{Session: parkedS.ID, Actor: "writer"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Respond(ctx, parkedS.ID, "rt_steps", playproto.Answer{Text: "blog"}, ""); err == nil || !strings.Contains(err.Error(), "reached its model through the model proxy before") {
		t.Fatalf("an answer without the key, AUTONOMY_LOCAL_AGENT set: %v", err)
	}

	withKey := newRunner(t, dir, Options{Exe: "/bin/true", Env: append(os.Environ(), "OPENAI_API_KEY=k")})
	got, _, err := withKey.Get(ctx, s.ID)
	if err != nil || got.SupervisorPID != os.Getpid() {
		t.Fatalf("reconciled with the key: %s, supervisor %d, %v", got.Status, got.SupervisorPID, err)
	}
	withKey.Wait()
}
