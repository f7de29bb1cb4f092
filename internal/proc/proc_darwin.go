//go:build darwin

package proc

import (
	"fmt"
	"sort"

	"golang.org/x/sys/unix"
)

// sZomb is the p_stat of a process that has exited and waits to be reaped (SZOMB, <sys/proc.h>).
const sZomb = 5

// kinfo is the kernel's record of the process pid (the kern.proc.pid sysctl): one system call,
// where gopsutil's status would run ps(1).
func kinfo(pid int) (*unix.KinfoProc, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("no process has pid %d", pid)
	}
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return nil, err
	}
	if int(k.Proc.P_pid) != pid {
		// The kernel answers a free pid with an empty record.
		return nil, fmt.Errorf("no process has pid %d", pid)
	}
	return k, nil
}

// startStamp is a process's creation time in microseconds since the epoch: what names it,
// together with its pid, on macOS.
func startStamp(k *unix.KinfoProc) uint64 {
	t := k.Proc.P_starttime
	return uint64(t.Sec)*1_000_000 + uint64(t.Usec)
}

// StartTime is when the process pid was created, in microseconds since the epoch. It does not
// change when the process execs, so it can be read right after starting a child. Together with
// the pid it names one process for good: a pid is reused only long after, by a process created
// later.
func StartTime(pid int) (uint64, error) {
	k, err := kinfo(pid)
	if err != nil {
		return 0, fmt.Errorf("cannot read the start time of process %d: %w", pid, err)
	}
	return startStamp(k), nil
}

// Parent is the parent of the process pid.
func Parent(pid int) (int, error) {
	k, err := kinfo(pid)
	if err != nil {
		return 0, fmt.Errorf("cannot read the parent of process %d: %w", pid, err)
	}
	return int(k.Eproc.Ppid), nil
}

// Alive says whether the process recorded as (pid, start) still runs. It is false when the pid is
// free, when it was reused by another process (the start time differs), and when the process has
// exited but not been reaped yet (a zombie).
func Alive(pid int, start uint64) bool {
	k, err := kinfo(pid)
	return err == nil && k.Proc.P_stat != sZomb && startStamp(k) == start
}

// Members is the pids of the processes of the group pgid that have not exited, sorted. The
// kern.proc.pgrp sysctl lists a group in one call.
func Members(pgid int) []int {
	if pgid <= 0 {
		return nil
	}
	ks, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgid)
	if err != nil {
		return nil
	}
	var pids []int
	for i := range ks {
		if int(ks[i].Eproc.Pgid) == pgid && ks[i].Proc.P_stat != sZomb {
			pids = append(pids, int(ks[i].Proc.P_pid))
		}
	}
	sort.Ints(pids)
	return pids
}
