//go:build linux

package proc

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// PidNS names this process's pid namespace: the inode of /proc/self/ns/pid. It fails when /proc
// is not this namespace's (a process in a pid namespace of its own that kept its parent's /proc,
// `unshare -p` without `--mount-proc`): /proc/self then names another process than this one,
// and every pid read there means something else, so nothing read there can be trusted.
func PidNS() (uint64, error) {
	self, err := os.Readlink("/proc/self")
	if err != nil {
		return 0, fmt.Errorf("cannot read /proc/self: %w", err)
	}
	if self != strconv.Itoa(os.Getpid()) {
		return 0, fmt.Errorf("/proc/self is process %s of another pid namespace, not this process (%d): this process runs in a pid namespace of its own over its parent's /proc", self, os.Getpid())
	}
	fi, err := os.Stat("/proc/self/ns/pid")
	if err != nil {
		return 0, fmt.Errorf("cannot read this process's pid namespace: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("cannot read this process's pid namespace: no inode")
	}
	return st.Ino, nil
}
