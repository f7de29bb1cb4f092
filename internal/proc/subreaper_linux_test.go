//go:build linux

package proc

import (
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestKillOrphansScansOnlyWithChildren: with no child at all KillOrphans returns without one
// /proc scan (it used to scan three times, reading every process's stat, at the end of every
// session); with a child it still finds it, kills and reaps it.
func TestKillOrphansScansOnlyWithChildren(t *testing.T) {
	scans := 0
	listChildren = func(pid int) []int { scans++; return children(pid) }
	t.Cleanup(func() { listChildren = children })

	if killed := KillOrphans(nil, 0); len(killed) != 0 || scans != 0 {
		t.Fatalf("no child: killed %v after %d /proc scans, want none and none", killed, scans)
	}
	if hasChildren() {
		t.Fatal("hasChildren says yes with no child")
	}

	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !hasChildren() {
		t.Fatal("hasChildren says no with a child running")
	}
	killed := KillOrphans(nil, 0)
	if !slices.Contains(killed, cmd.Process.Pid) || scans == 0 {
		t.Fatalf("a child %d: killed %v after %d scans", cmd.Process.Pid, killed, scans)
	}
	if hasChildren() {
		t.Fatal("the child was not reaped")
	}
}

// TestKillOrphansCountsOnlyTheEscaped: the session's group is killed as it ends, and its members
// (zombies now, or still dying) are reaped without being counted, as is a child of another group
// that has exited; a child running in a group of its own escaped, and is.
func TestKillOrphansCountsOnlyTheEscaped(t *testing.T) {
	start := func(pgid int) *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	leader := start(0)
	member := start(leader.Process.Pid)
	escaped := start(0)
	step := start(0) // a group of its own, killed as it ended: a zombie by now
	if err := Kill(leader.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := Kill(step.Process.Pid); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !zombie(step.Process.Pid); {
		if time.Now().After(deadline) {
			t.Fatal("the killed group's process is no zombie")
		}
		time.Sleep(10 * time.Millisecond)
	}
	killed := KillOrphans(nil, leader.Process.Pid)
	if !slices.Equal(killed, []int{escaped.Process.Pid}) {
		t.Fatalf("killed %v, want only the escaped %d (the group's %d and %d ended with it)", killed, escaped.Process.Pid, leader.Process.Pid, member.Process.Pid)
	}
	if hasChildren() {
		t.Fatal("a child was not reaped")
	}
}
