//go:build !unix

package local

import "time"

// usedCPU is not measured where getrusage is missing: benchmarks report 0.
func usedCPU() time.Duration { return 0 }
