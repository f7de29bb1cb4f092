//go:build linux || darwin

package proc

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestStartTimeSelf(t *testing.T) {
	start, err := StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := StartTime(os.Getpid()); again != start || start == 0 {
		t.Fatalf("start time %d then %d", start, again)
	}
	if !Alive(os.Getpid(), start) {
		t.Error("this process is not Alive with its own start time")
	}
	if Alive(os.Getpid(), start+1) {
		t.Error("Alive with another start time: a reused pid would pass for the recorded process")
	}
	for _, pid := range []int{0, -1} {
		if Alive(pid, start) {
			t.Errorf("Alive(%d) is true", pid)
		}
		if _, err := StartTime(pid); err == nil {
			t.Errorf("StartTime(%d) has no error", pid)
		}
	}
}

// started is a process tree started under SysProcAttr or Detach, reaped in the background.
type started struct {
	cmd    *exec.Cmd
	pgid   int
	exited chan struct{}
}

// start runs script under sh as the leader of a new group and waits for the line "ready", which
// the script prints once it has set itself up.
func start(t *testing.T, attr *syscall.SysProcAttr, script string) *started {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = attr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &started{cmd: cmd, pgid: cmd.Process.Pid, exited: make(chan struct{})}
	t.Cleanup(func() {
		_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
		<-s.exited
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("script printed %q (%v), want ready", line, err)
	}
	return s
}

// record is the (pid, start time) of every live member of the group, as a runner records them.
func record(t *testing.T, pgid, want int) map[int]uint64 {
	t.Helper()
	pids := Members(pgid)
	if len(pids) != want {
		t.Fatalf("group %d has members %v, want %d of them", pgid, pids, want)
	}
	rec := map[int]uint64{}
	for _, pid := range pids {
		st, err := StartTime(pid)
		if err != nil {
			t.Fatal(err)
		}
		if !Alive(pid, st) {
			t.Fatalf("member %d is not Alive", pid)
		}
		rec[pid] = st
	}
	return rec
}

func assertAllDead(t *testing.T, pgid int, rec map[int]uint64) {
	t.Helper()
	for pid, st := range rec {
		if Alive(pid, st) {
			t.Errorf("process %d of group %d is still alive", pid, pgid)
		}
	}
	if m := Members(pgid); len(m) != 0 {
		t.Errorf("group %d still has members %v", pgid, m)
	}
}

// exitSignal is the signal that ended the group's leader, once it has been reaped.
func (s *started) exitSignal(t *testing.T) syscall.Signal {
	t.Helper()
	<-s.exited
	ws, ok := s.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		t.Fatalf("leader ended with %v, not by a signal", s.cmd.ProcessState)
	}
	return ws.Signal()
}

// waitMembers waits for the group to have n live members, as a forked shell takes a moment to
// start its children.
func waitMembers(t *testing.T, pgid, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); len(Members(pgid)) != n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("group %d has members %v, want %d of them", pgid, Members(pgid), n)
		}
	}
}

func TestTerminateTree(t *testing.T) {
	// The leader starts a sleep and a shell, which starts a sleep (a grandchild) and a shell, which
	// starts a sleep (a great-grandchild): 6 processes, all in the leader's group.
	s := start(t, SysProcAttr(), `sleep 300 & sh -c 'sleep 300 & sh -c "sleep 300 & wait" & wait' & echo ready; wait`)
	waitMembers(t, s.pgid, 6)
	rec := record(t, s.pgid, 6)
	if err := Terminate(s.pgid, time.Minute); err != nil {
		t.Fatal(err)
	}
	// The leader may still be a zombie here, its parent (this test) not having reaped it yet.
	assertAllDead(t, s.pgid, rec)
	if sig := s.exitSignal(t); sig != syscall.SIGTERM {
		t.Errorf("leader ended by %v, want SIGTERM", sig)
	}
}

func TestMembersSorted(t *testing.T) {
	s := start(t, SysProcAttr(), `sleep 300 & sleep 300 & sleep 300 & echo ready; wait`)
	m := Members(s.pgid)
	if len(m) != 4 || !slices.IsSorted(m) || m[0] != s.pgid {
		t.Errorf("Members(%d) = %v, want the leader and its 3 children, sorted", s.pgid, m)
	}
	if m := Members(0); m != nil {
		t.Errorf("Members(0) = %v", m)
	}
}

func TestTerminateIgnoringTERM(t *testing.T) {
	// An ignored signal stays ignored across fork and exec, so the sleeps ignore TERM too.
	s := start(t, SysProcAttr(), `trap '' TERM; sleep 300 & sleep 300 & echo ready; wait`)
	rec := record(t, s.pgid, 3)
	if err := Terminate(s.pgid, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	assertAllDead(t, s.pgid, rec)
	if sig := s.exitSignal(t); sig != syscall.SIGKILL {
		t.Errorf("leader ended by %v, want SIGKILL after the grace period", sig)
	}
}

func TestTerminateStopped(t *testing.T) {
	// A fatal signal ends even a stopped process, but one it handles waits until it runs again.
	s := start(t, SysProcAttr(), `trap 'exit 7' TERM; sleep 300 & echo ready; wait`)
	rec := record(t, s.pgid, 2)
	if err := Signal(s.pgid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// A long grace: were the group not continued, TERM would stay pending and KILL end it.
	if err := Terminate(s.pgid, time.Minute); err != nil {
		t.Fatal(err)
	}
	assertAllDead(t, s.pgid, rec)
	<-s.exited
	if code := s.cmd.ProcessState.ExitCode(); code != 7 {
		t.Errorf("leader ended with %v, want exit status 7 from its TERM trap: a paused group must act on TERM", s.cmd.ProcessState)
	}
}

func TestDetachedSessionTerminated(t *testing.T) {
	s := start(t, Detach(), `sleep 300 & echo ready; wait`)
	sid, err := unix.Getsid(s.pgid)
	if err != nil {
		t.Fatal(err)
	}
	pgrp, err := syscall.Getpgid(s.pgid)
	if err != nil {
		t.Fatal(err)
	}
	if sid != s.pgid || pgrp != s.pgid {
		t.Errorf("detached process %d is in session %d, group %d; want its own", s.pgid, sid, pgrp)
	}
	rec := record(t, s.pgid, 2)
	if err := Terminate(s.pgid, time.Minute); err != nil {
		t.Fatal(err)
	}
	assertAllDead(t, s.pgid, rec)
}

func TestAliveAfterExit(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = SysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	st, err := StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	if !Alive(pid, st) || Alive(pid, st+1) || Alive(pid, st-1) {
		t.Fatal("Alive must be true for the recorded start time only")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Not reaped yet: a zombie, dead all the same. The kernel makes it one asynchronously.
	for deadline := time.Now().Add(10 * time.Second); Alive(pid, st); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a killed, unreaped child is still Alive")
		}
	}
	// kill(pid, 0) still reaches a zombie, which is not reaped.
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("killed child: %v; want a zombie", err)
	}
	if m := Members(pid); len(m) != 0 {
		t.Errorf("Members counts a zombie: %v", m)
	}
	_ = cmd.Wait()
	if Alive(pid, st) {
		t.Error("a reaped child is Alive")
	}
	if _, err := StartTime(pid); err == nil {
		t.Log("pid reused already; StartTime of a reaped child could not be checked")
	}
}

func TestSignal(t *testing.T) {
	for _, pgid := range []int{-3, 0, 1, syscall.Getpgrp()} {
		if err := Signal(pgid, 0); err == nil {
			t.Errorf("Signal(%d) has no error", pgid)
		}
	}
	// A group that is gone: the pid of a reaped child that led a group.
	cmd := exec.Command("true")
	cmd.SysProcAttr = SysProcAttr()
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if err := Signal(cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Errorf("signalling a finished group: %v", err)
	}
	if err := Terminate(cmd.Process.Pid, time.Second); err != nil {
		t.Errorf("terminating a finished group: %v", err)
	}
}

// A child's ancestors start with this process, whatever the child's environment says.
func TestAncestors(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	self, err := StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	got := Ancestors(cmd.Process.Pid)
	if len(got) == 0 || got[0] != (Named{PID: os.Getpid(), Start: self}) {
		t.Fatalf("the child's ancestors %v do not start with this process (%d, %d)", got, os.Getpid(), self)
	}
	if p, err := Parent(-1); err == nil || p != 0 {
		t.Errorf("Parent(-1) = %d, %v; want an error", p, err)
	}
}
