//go:build linux

package proc

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// prSetChildSubreaper is prctl(2)'s PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// BecomeSubreaper makes this process the child subreaper of its descendants: one that leaves its
// process group (setsid, setpgid) and loses its parent is re-parented to this process, not to
// init, so that KillOrphans finds it. A session's supervisor does this before it starts anything.
func BecomeSubreaper() error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// KillOrphans KILLs every child of this process that is still there, with its group, reaps it,
// and does it again for their children, which are re-parented here as they die, until none is
// left (within a few seconds). Called by a subreaper once it has waited for every child it
// started itself: what remains escaped a session's process group. A child spare says yes to is
// left alone (another session's supervisor, started from inside this session). A child still in
// the process group group (the session's, killed as it ended; 0 for none) did not escape: it is
// killed and reaped as well, a zombie too, and not counted (say a relay the session's sandbox
// forked for a connection, re-parented here when its parent ended). A child that has exited
// already (a zombie: say of a step's agent's group, which the step killed as it ended) is reaped
// and not counted either: nothing of it outlived its group. It returns the pids of the others,
// the escaped, killed.
func KillOrphans(spare func(pid int) bool, group int) []int {
	var killed []int
	self := os.Getpid()
	deadline := time.Now().Add(killWait)
	quiet := 0
	spared := map[int]bool{}
	for time.Now().Before(deadline) && quiet < 3 {
		if !hasChildren() {
			// No child at all, not even a zombie, so no descendant either: a process's children
			// are re-parented here before it turns into a zombie of ours. The common end of a
			// session, and no /proc scan (hundreds of files on a busy machine).
			return killed
		}
		var kids []int
		for _, pid := range listChildren(self) {
			if spared[pid] {
				continue
			}
			if spare != nil && spare(pid) {
				spared[pid] = true
				continue
			}
			kids = append(kids, pid)
		}
		if len(kids) == 0 {
			quiet++
			time.Sleep(poll / 4)
			continue
		}
		quiet = 0
		for _, pid := range kids {
			if zombie(pid) {
				continue // dead already (a group killed as it ended, say a step's agent's): reaped below
			}
			pgid, err := syscall.Getpgid(pid)
			if err == nil && pgid == pid && pgid != syscall.Getpgrp() {
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
			if err != nil || group <= 0 || pgid != group {
				killed = append(killed, pid)
			}
		}
		for _, pid := range kids {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, 0, nil)
		}
	}
	return killed
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := readStatFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	line := string(b)
	i := strings.LastIndexByte(line, ')')
	return i >= 0 && strings.HasPrefix(line[i+1:], " Z")
}

// listChildren is children, replaced in tests to count the /proc scans.
var listChildren = children

// hasChildren reports whether this process has any child, running or a zombie, leaving each one
// waitable (waitid with WNOWAIT): ECHILD says there is none. It says yes when it cannot tell.
func hasChildren() bool {
	var info [128]byte // a siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pAll, 0, uintptr(unsafe.Pointer(&info[0])), wExited|wNoHang|wNoWait, 0, 0)
		if errno != syscall.EINTR {
			return errno != syscall.ECHILD
		}
	}
}

// waitid(2)'s idtype P_ALL and its options WEXITED, WNOHANG and WNOWAIT.
const (
	pAll    = 0
	wExited = 4
	wNoHang = 1
	wNoWait = 0x01000000
)

// children lists the processes whose parent is pid (zombies included: they wait to be reaped).
func children(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n == pid {
			continue
		}
		b, err := readStatFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		line := string(b)
		i := strings.LastIndexByte(line, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(line[i+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil && ppid == pid {
			out = append(out, n)
		}
	}
	return out
}
