//go:build linux

package proc

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// stat is what this package needs of /proc/PID/stat.
type stat struct {
	state   byte   // field 3: R, S, D, T, Z (zombie), X (dead) …
	ppid    int    // field 4: the parent
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
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return stat{}, fmt.Errorf("malformed stat line %q: parent: %v", line, err)
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
	return stat{state: fields[0][0], ppid: ppid, pgrp: pgrp, session: session, start: start}, nil
}

// readStat reads and parses /proc/PID/stat.
func readStat(pid int) (stat, error) {
	if pid <= 0 {
		return stat{}, fmt.Errorf("no process has pid %d", pid)
	}
	b, err := readStatFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	return parseStat(strings.TrimSpace(string(b)))
}

// maxStat bounds what readStatFile reads: a stat line is a few hundred bytes (its command name
// is at most 64), so 4 KiB is never short.
const maxStat = 4 << 10

// readStatFile reads a /proc/PID/stat file. A scan of /proc reads one per process, several times
// per launch: it goes to the system directly, where os.ReadFile would add an fstat and four
// fcntl calls (the poller's) to each.
func readStatFile(path string) ([]byte, error) {
	fd, err := ignoringEINTR(func() (int, error) { return syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0) })
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	buf := make([]byte, 0, 512)
	for len(buf) < maxStat {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := ignoringEINTR(func() (int, error) { return syscall.Read(fd, buf[len(buf):cap(buf)]) })
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
	return nil, fmt.Errorf("%s is longer than %d bytes", path, maxStat)
}

// ignoringEINTR calls f until a signal does not interrupt it.
func ignoringEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != syscall.EINTR {
			return n, err
		}
	}
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

// Parent is the parent of the process pid, as this process's pid namespace sees it (0 for a
// process whose parent it cannot see).
func Parent(pid int) (int, error) {
	s, err := readStat(pid)
	if err != nil {
		return 0, fmt.Errorf("cannot read the parent of process %d: %w", pid, err)
	}
	return s.ppid, nil
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
