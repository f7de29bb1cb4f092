//go:build unix

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local"
)

const stubbornFleet = `schema: autonomy.ir.v1
targets: [local]
actors:
  stubborn:
    behavior: scripts/stubborn.sh
    triggers: [{ dispatch: true }]
policy:
  box:
    local: { graceSeconds: 2 }
`

// stubbornScript traps TERM, as does the child it leaves in its group.
const stubbornScript = `#!/bin/sh
trap 'echo TERM ignored' TERM
sh -c 'trap "" TERM; sleep 300' &
echo ready > "$AUTONOMY_DIR/ready-$AUTONOMY_SESSION"
while :; do sleep 0.1; done
`

// TestRunnerCancelInterrupted: runner cancel of a session whose processes trap TERM is
// interrupted (SIGINT) during the grace period. The cancel was recorded and TERM sent, and the
// session's supervisor, not the cancelling command, KILLs the whole group once the grace period
// is over: nothing is left running, and the session stays cancelled.
func TestRunnerCancelInterrupted(t *testing.T) {
	dir := runnerFleet(t, stubbornFleet, map[string]string{"scripts/stubborn.sh": stubbornScript})
	out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "stubborn")
	if code != 0 {
		t.Fatalf("launch: %d %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	s := waitFor(t, st, id, func(s store.Session) bool {
		_, err := os.Stat(filepath.Join(dir, "ready-"+id))
		return s.PID > 0 && err == nil
	})
	t.Cleanup(func() { proc.Kill(s.PID); proc.Kill(s.SupervisorPID) })
	if n := len(proc.Members(s.PID)); n < 2 {
		t.Fatalf("the session's group has %d processes, want its script and the child", n)
	}

	cancel := exec.Command(autonomyBin(t), "runner", "--dir", dir, "cancel", id)
	var cancelOut strings.Builder
	cancel.Stdout, cancel.Stderr = &cancelOut, &cancelOut
	began := time.Now()
	if err := cancel.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cancel.Wait() }()
	// Interrupt it once the cancel is recorded, within the grace period, if it is still there.
	waitFor(t, st, id, func(s store.Session) bool { return s.Status == ir.Cancelled })
	_ = cancel.Process.Signal(syscall.SIGINT)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not return")
	}
	if d := time.Since(began); d > 1500*time.Millisecond {
		t.Errorf("cancel took %s: it waited for the grace period (2s)", d)
	}

	time.Sleep(500 * time.Millisecond)
	if n := len(proc.Members(s.PID)); n == 0 {
		t.Errorf("the group, which traps TERM, is gone within the grace period: KILL came early")
	}
	deadline := began.Add(2*time.Second + 5*time.Second)
	for len(proc.Members(s.PID)) > 0 || proc.Alive(s.SupervisorPID, s.SupervisorStart) {
		if time.Now().After(deadline) {
			t.Fatalf("after the grace period: group %d has %v, supervisor alive %v (cancel said %q)", s.PID, proc.Members(s.PID), proc.Alive(s.SupervisorPID, s.SupervisorStart), cancelOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if d := time.Since(began); d < 2*time.Second {
		t.Errorf("the group was gone after %s, before the grace period", d)
	}
	got, _, err := st.Get(ctx, id)
	if err != nil || got.Status != ir.Cancelled || !got.StopBy.IsZero() {
		t.Errorf("after the stop: %s (%v), stop by %v", got.Status, err, got.StopBy)
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "cancel", id); code != 1 || !strings.Contains(errOut, "already ended: cancelled") {
		t.Errorf("second cancel: exit %d, %q", code, errOut)
	}
}

// waitFor polls the session id until ok holds, for up to 30 s.
func waitFor(t *testing.T, st *store.Store, id string, ok func(store.Session) bool) store.Session {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		s, found, err := st.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if found && ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: waited in vain; it is %+v", id, s)
		}
	}
}
