//go:build unix

package local

import (
	"syscall"
	"time"
)

// usedCPU is the CPU time (user and system) of this process and of its children it has waited
// for (a session's script): what a benchmark reports beside the wall time, which a busy
// machine inflates.
func usedCPU() time.Duration {
	var self, children syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children) != nil {
		return 0
	}
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
}
