package gctune

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// restore puts back the collector's settings when t ends.
func restore(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
}

// unset removes name from the environment for t.
func unset(t *testing.T, name string) {
	t.Setenv(name, "") // restored after t
	os.Unsetenv(name)
}

// TestOneShotSetsTheCollector: without GOGC and GOMEMLIMIT, OneShot sets Percent and Limit.
func TestOneShotSetsTheCollector(t *testing.T) {
	restore(t)
	unset(t, "GOGC")
	unset(t, "GOMEMLIMIT")
	OneShot()
	if got := debug.SetGCPercent(100); got != Percent {
		t.Errorf("GC percent %d, want %d", got, Percent)
	}
	if got := debug.SetMemoryLimit(-1); got != Limit {
		t.Errorf("memory limit %d, want %d", got, Limit)
	}
}

// TestOneShotLeavesTheUsersTuning: GOGC or GOMEMLIMIT in the environment is left as it is.
func TestOneShotLeavesTheUsersTuning(t *testing.T) {
	restore(t)
	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "2GiB")
	debug.SetGCPercent(150)
	debug.SetMemoryLimit(2 << 30)
	OneShot()
	if got := debug.SetGCPercent(100); got != 150 {
		t.Errorf("GC percent %d, want the environment's 150", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 2<<30 {
		t.Errorf("memory limit %d, want the environment's 2GiB", got)
	}
}
