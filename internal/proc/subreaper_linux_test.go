//go:build linux

package proc

import (
	"os/exec"
	"slices"
	"testing"
)

// TestKillOrphansScansOnlyWithChildren: with no child at all KillOrphans returns without one
// /proc scan (it used to scan three times, reading every process's stat, at the end of every
// session); with a child it still finds it, kills and reaps it.
func TestKillOrphansScansOnlyWithChildren(t *testing.T) {
	scans := 0
	listChildren = func(pid int) []int { scans++; return children(pid) }
	t.Cleanup(func() { listChildren = children })

	if killed := KillOrphans(nil); len(killed) != 0 || scans != 0 {
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
	killed := KillOrphans(nil)
	if !slices.Contains(killed, cmd.Process.Pid) || scans == 0 {
		t.Fatalf("a child %d: killed %v after %d scans", cmd.Process.Pid, killed, scans)
	}
	if hasChildren() {
		t.Fatal("the child was not reaped")
	}
}
