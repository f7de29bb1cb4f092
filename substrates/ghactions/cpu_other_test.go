//go:build !unix

package ghactions

import "time"

// processCPU is not measured here: the benchmark reports 0 CPU.
func processCPU() time.Duration { return 0 }
