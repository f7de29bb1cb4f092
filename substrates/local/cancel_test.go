//go:build unix

package local

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// TestCancelReturnsAtOnce: cancel records the session cancelled and sends TERM, and returns
// without waiting for the grace period; the supervisor KILLs the group, which ignores TERM, once
// the grace period (1 s) is over, and not before.
func TestCancelReturnsAtOnce(t *testing.T) {
	dir := installFleet(t, treeFleet, false)
	r := newRunner(t, dir, Options{})
	s := launch(t, r, LaunchRequest{Actor: "tree"})
	pids := pidsOf(t, dir, s.ID)
	ctx := context.Background()
	began := time.Now()
	if ok, err := r.Cancel(ctx, s.ID); !ok || err != nil {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	if d := time.Since(began); d > 500*time.Millisecond {
		t.Errorf("cancel took %s: it waited for the grace period", d)
	}
	got, _, _ := r.Store.Get(ctx, s.ID)
	if got.Status != ir.Cancelled || got.StopBy.IsZero() {
		t.Fatalf("right after cancel: %s, stop by %v", got.Status, got.StopBy)
	}
	time.Sleep(300 * time.Millisecond)
	for _, pid := range pids {
		if !alive(pid) {
			t.Errorf("pid %d, which ignores TERM, is gone before the grace period is over", pid)
		}
	}
	r.Wait()
	if d := time.Since(began); d < time.Second {
		t.Errorf("the supervisor was done after %s, before the grace period", d)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d survived the grace period", pid)
			proc.Kill(pid)
		}
	}
	if got, _, _ := r.Store.Get(ctx, s.ID); got.Status != ir.Cancelled || !got.StopBy.IsZero() {
		t.Errorf("after the stop: %s, stop by %v", got.Status, got.StopBy)
	}
}

// TestCancelGraceFromOptions: Options.Grace, when set, is the grace period a cancel gives in
// place of the installation's graceSeconds (1 s here): the KILL deadline it records is that far
// off, and the supervisor KILLs the group, which ignores TERM, at it.
func TestCancelGraceFromOptions(t *testing.T) {
	t.Parallel()
	const grace = 300 * time.Millisecond
	dir := installFleet(t, treeFleet, false)
	r := newRunner(t, dir, Options{Grace: grace})
	s := launch(t, r, LaunchRequest{Actor: "tree"})
	pids := pidsOf(t, dir, s.ID)
	ctx := context.Background()
	before := time.Now()
	if ok, err := r.Cancel(ctx, s.ID); !ok || err != nil {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	after := time.Now()
	got, _, _ := r.Store.Get(ctx, s.ID)
	if got.StopBy.Before(before.Add(grace)) || got.StopBy.After(after.Add(grace)) {
		t.Errorf("the KILL is due %s after the cancel; want %s", got.StopBy.Sub(before), grace)
	}
	r.Wait()
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d survived the grace period", pid)
			proc.Kill(pid)
		}
	}
}

// graceOver ends the grace period of the stop of session id under way, as its passing would:
// the KILL deadline it recorded, checked to be the grace period (1 s) after since, moves to now.
func graceOver(t *testing.T, r *Runner, id string, since time.Time) {
	t.Helper()
	ctx := context.Background()
	s, _, err := r.Store.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if due := s.StopBy.Sub(since); due < time.Second || due > time.Second+time.Minute {
		t.Fatalf("the KILL is due %s after the stop began; want the grace period, 1s", due)
	}
	if _, _, err := r.Store.Modify(ctx, id, nil, func(m *store.Session) { m.StopBy = time.Now().Add(-time.Millisecond) }); err != nil {
		t.Fatal(err)
	}
}

// orphanGroup starts a process group that ignores TERM, reaped in the background, and records it
// as a running session of actor tree whose supervisor is dead.
func orphanGroup(t *testing.T, r *Runner, timeout time.Duration) (store.Session, int) {
	t.Helper()
	dead := deadProcess(t)
	var s store.Session
	err := r.Store.Tx(context.Background(), func(tx *store.Tx) error {
		s = store.Session{Actor: "tree", Kind: "agent", Status: ir.Running, Origin: "operator",
			SupervisorPID: dead.pid, SupervisorStart: dead.start, StartedAt: time.Now().Add(-time.Hour), CreatedAt: time.Now(), Timeout: timeout}
		return tx.Insert(&s)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Started as a session is: its environment names it.
	cmd := exec.Command("/bin/sh", "-c", "trap '' TERM; sleep 300 & wait")
	cmd.Env = append(os.Environ(), SessionEnv+"="+s.ID)
	cmd.SysProcAttr = proc.SysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	pid := cmd.Process.Pid
	t.Cleanup(func() { proc.Kill(pid) })
	start, err := proc.StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	if s, _, err = r.Store.Modify(context.Background(), s.ID, nil, func(m *store.Session) { m.PID, m.PIDStart = pid, start }); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(proc.Members(pid)) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the group never started its child")
		}
	}
	return s, pid
}

// TestOrphanCancelKilledByReconcile: cancelling a session whose supervisor died sends TERM; the
// group ignores it, and the first list after the grace period (not before) KILLs what is left.
func TestOrphanCancelKilledByReconcile(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, treeFleet, false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	s, pid := orphanGroup(t, r, 0)
	began := time.Now()
	if ok, err := r.Cancel(ctx, s.ID); !ok || err != nil {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	if _, err := r.List(ctx, false); err != nil {
		t.Fatal(err)
	}
	if m := proc.Members(pid); len(m) != 2 {
		t.Fatalf("within the grace period the group has %v; want both processes still there", m)
	}
	graceOver(t, r, s.ID, began)
	if _, err := r.List(ctx, false); err != nil {
		t.Fatal(err)
	}
	assertStopped(t, r, s.ID, pid, ir.Cancelled)
}

// TestOrphanTimeoutKilledByTick: a session whose supervisor died and that outlived its timeout is
// failed with TERM by the first reconcile, and KILLed by the first tick after the grace period.
func TestOrphanTimeoutKilledByTick(t *testing.T) {
	dir := installFleet(t, treeFleet, false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	s, pid := orphanGroup(t, r, time.Minute)
	began := time.Now()
	got, _, err := r.Get(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 500*time.Millisecond {
		t.Errorf("reconciling took %s: it waited for the grace period", d)
	}
	if got.Status != ir.Failed || !strings.Contains(got.Reason, "timed out") || got.StopBy.IsZero() {
		t.Fatalf("after reconciling: %s %q, stop by %v", got.Status, got.Reason, got.StopBy)
	}
	if m := proc.Members(pid); len(m) != 2 {
		t.Fatalf("within the grace period the group has %v; want both processes still there", m)
	}
	graceOver(t, r, s.ID, began)
	if _, err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	assertStopped(t, r, s.ID, pid, ir.Failed)
}

// assertStopped checks that the group pgid is gone and the session's stop is over.
func assertStopped(t *testing.T, r *Runner, id string, pgid int, status ir.SessionStatus) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); len(proc.Members(pgid)) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the group %d survived: %v", pgid, proc.Members(pgid))
		}
	}
	got, _, _ := r.Store.Get(context.Background(), id)
	if got.Status != status || !got.StopBy.IsZero() {
		t.Errorf("after the stop: %s, stop by %v; want %s and no stop pending", got.Status, got.StopBy, status)
	}
	if ss, err := r.Store.Stopping(context.Background()); err != nil || len(ss) != 0 {
		t.Errorf("stops still pending: %+v, %v", ss, err)
	}
}

// An agent working in the installation root can write the database: a session row it made name
// a process group of yours (its pid and start time are public) is not signalled by a cancel, nor
// KILLed when the stop's grace period is over: none of the group was started as that session.
func TestCancelSignalsOnlyTheSessionsGroup(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, treeFleet, false)
	r := newRunner(t, dir, Options{})
	victim := exec.Command("/bin/sh", "-c", "sleep 300 & wait")
	victim.SysProcAttr = proc.SysProcAttr()
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	go victim.Wait()
	pid := victim.Process.Pid
	t.Cleanup(func() { proc.Kill(pid) })
	start, err := proc.StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dead := deadProcess(t) // its supervisor is gone: reconciliation finishes the stop
	var s store.Session
	err = r.Store.Tx(ctx, func(tx *store.Tx) error {
		s = store.Session{Actor: "tree", Kind: "agent", Status: ir.Running, Origin: "operator", PID: pid, PIDStart: start,
			SupervisorPID: dead.pid, SupervisorStart: dead.start, StartedAt: time.Now(), CreatedAt: time.Now()}
		return tx.Insert(&s)
	})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if ok, err := r.Cancel(ctx, s.ID); !ok || err != nil {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	graceOver(t, r, s.ID, began)
	if err := r.stopPending(ctx); err != nil {
		t.Fatal(err)
	}
	if !alive(pid) {
		t.Fatal("the cancel signalled a process group that is not the session's")
	}
	if got, _, _ := r.Store.Get(ctx, s.ID); got.Status != ir.Cancelled {
		t.Errorf("the session is %s", got.Status)
	}
}
