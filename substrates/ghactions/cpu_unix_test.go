//go:build unix

package ghactions

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used so far: what a benchmark
// reports beside the wall time, which a busy machine inflates.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
