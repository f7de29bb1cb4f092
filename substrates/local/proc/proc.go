// Package proc starts, recognises and stops the process groups that run local sessions, on Linux.
//
// A session's process is recorded as a pair (pid, start time) so that any later process, not only
// the one that started it, can tell whether that very process still runs: a pid alone may have been
// reused by an unrelated process since. Every session leads a process group of its own, so that
// stopping it stops whatever it started too.
package proc

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// poll is how often Terminate looks whether a group is gone yet: short enough that stopping a
// session is not noticeably slower than its processes take to exit, long enough to cost nothing.
const poll = 20 * time.Millisecond

// killWait bounds the wait after SIGKILL, which cannot be caught: a process that outlives it is
// stuck in the kernel (uninterruptible I/O), and waiting longer would only hang the caller.
const killWait = 5 * time.Second

// stat is what this package needs of /proc/PID/stat.
type stat struct {
	state   byte   // field 3: R, S, D, T, Z (zombie), X (dead) …
	pgrp    int    // field 5: the process group
	session int    // field 6: the session
	start   uint64 // field 22: clock ticks from boot to the process's creation
}

// parseStat reads a line of /proc/PID/stat. The command name (field 2) is in parentheses and may
// itself hold spaces and parentheses, even ") (", so the fields are counted from the last ')'.
func parseStat(line string) (stat, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 || !strings.Contains(line[:i], "(") {
		return stat{}, fmt.Errorf("malformed stat line %q: no command name in parentheses", line)
	}
	// fields[0] is field 3 of the line.
	fields := strings.Fields(line[i+1:])
	if len(fields) < 20 {
		return stat{}, fmt.Errorf("malformed stat line %q: %d fields after the command name, want at least 20", line, len(fields))
	}
	if len(fields[0]) != 1 {
		return stat{}, fmt.Errorf("malformed stat line %q: state %q is not one letter", line, fields[0])
	}
	pgrp, err := strconv.Atoi(fields[2])
	if err != nil {
		return stat{}, fmt.Errorf("malformed stat line %q: process group: %v", line, err)
	}
	session, err := strconv.Atoi(fields[3])
	if err != nil {
		return stat{}, fmt.Errorf("malformed stat line %q: session: %v", line, err)
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return stat{}, fmt.Errorf("malformed stat line %q: start time: %v", line, err)
	}
	return stat{state: fields[0][0], pgrp: pgrp, session: session, start: start}, nil
}

// readStat reads and parses /proc/PID/stat.
func readStat(pid int) (stat, error) {
	if pid <= 0 {
		return stat{}, fmt.Errorf("no process has pid %d", pid)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	return parseStat(strings.TrimSpace(string(b)))
}

// gone says whether a process in that state has finished running: a zombie has exited and only
// waits for its parent to read its status, so it counts as dead.
func gone(state byte) bool { return state == 'Z' || state == 'X' || state == 'x' }

// StartTime is when the process pid was created, in clock ticks since boot. It does not change
// when the process execs, so it can be read right after starting a child. Together with the pid
// it names one process for good: a pid is reused only long after, by a process created later.
func StartTime(pid int) (uint64, error) {
	s, err := readStat(pid)
	if err != nil {
		return 0, fmt.Errorf("cannot read the start time of process %d: %w", pid, err)
	}
	return s.start, nil
}

// Alive says whether the process recorded as (pid, start) still runs. It is false when the pid is
// free, when it was reused by another process (the start time differs), and when the process has
// exited but not been reaped yet (a zombie).
func Alive(pid int, start uint64) bool {
	s, err := readStat(pid)
	return err == nil && !gone(s.state) && s.start == start
}

// Members is the pids of the processes of the group pgid that have not exited, sorted. It scans
// /proc because no system call lists a group; a process that vanishes during the scan is skipped.
func Members(pgid int) []int {
	if pgid <= 0 {
		return nil
	}
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var pids []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		s, err := readStat(pid)
		if err == nil && s.pgrp == pgid && !gone(s.state) {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	return pids
}

// Signal sends sig to every process of the group pgid. A group that no longer exists is not an
// error: the caller wanted it stopped, and it is.
//
// It refuses pgid 0 and 1, which kill(2) reads as "this process's group" and "every process", and
// this process's own group, so that a wrong pid in the database cannot take the runner down.
func Signal(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("refusing to signal process group %d: it is not a session's group", pgid)
	}
	if pgid == syscall.Getpgrp() {
		return fmt.Errorf("refusing to signal process group %d: it is this process's own group", pgid)
	}
	err := syscall.Kill(-pgid, sig)
	if err == nil || errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return fmt.Errorf("cannot send %v to process group %d: %w", sig, pgid, err)
}

// Terminate stops the whole group pgid: SIGTERM, so its processes can clean up, then SIGKILL for
// whatever is still there after grace. It returns once no process of the group is left, and an
// error only when some survive SIGKILL too.
//
// A process that left the group (setsid, setpgid) escapes it: the group is the unit of control.
func Terminate(pgid int, grace time.Duration) error {
	if err := Signal(pgid, syscall.SIGTERM); err != nil {
		return err
	}
	// A stopped (paused) process keeps SIGTERM pending until it runs again.
	if err := Signal(pgid, syscall.SIGCONT); err != nil {
		return err
	}
	if emptied(pgid, grace, 0) {
		return nil
	}
	if err := Signal(pgid, syscall.SIGKILL); err != nil {
		return err
	}
	// SIGKILL again on every poll: a process forked while the first one was delivered would
	// otherwise be left running.
	if emptied(pgid, killWait, syscall.SIGKILL) {
		return nil
	}
	return fmt.Errorf("process group %d survived SIGKILL for %s: processes %v are stuck in the kernel (see their state in /proc/PID/stat)", pgid, killWait, Members(pgid))
}

// emptied waits up to d for the group pgid to have no members left, sending it resend (unless 0)
// on every poll, and says whether it emptied.
func emptied(pgid int, d time.Duration, resend syscall.Signal) bool {
	deadline := time.Now().Add(d)
	for {
		if len(Members(pgid)) == 0 {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(min(poll, time.Until(deadline)))
		if resend != 0 {
			_ = Signal(pgid, resend)
		}
	}
}

// SysProcAttr is for starting a session's process: it leads a new process group, whose id is its
// pid, so that Signal and Terminate reach everything it starts and nothing else.
//
// It deliberately sets no Pdeathsig. A session must outlive a runner that dies: it is recorded
// with its (pid, start time), and whichever process looks next decides, from the database, whether
// to let it finish or stop it on its timeout. Pdeathsig would also fire when the OS thread that
// forked the child exits, which the Go runtime does at will, killing sessions at random.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// Detach is for starting a long-lived supervisor: it gets a session of its own, with no
// controlling terminal, so closing the terminal (SIGHUP) or ending the launcher leaves it running.
// A session leader also leads a new process group, so Terminate(pid) stops it as well.
func Detach() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
