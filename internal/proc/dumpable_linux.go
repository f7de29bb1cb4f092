//go:build linux

package proc

import "golang.org/x/sys/unix"

// NotDumpable makes this process non-dumpable (prctl PR_SET_DUMPABLE 0): another process of the
// same user, not root, can then neither read its /proc/PID/environ, mem, fd or maps nor ptrace
// it. The runner's own processes hold the operator's environment (credentials among it) and do
// this first; a program they exec is dumpable again (execve resets the flag).
func NotDumpable() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
