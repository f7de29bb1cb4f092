package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// gcPercent reads the collector's GOGC setting (SetGCPercent returns the one it replaces).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestFloorHoldsUntilTheFirstCycle: armed, the collector is off under a memory limit of Floor;
// the first cycle puts GOGC=100 and no limit back.
func TestFloorHoldsUntilTheFirstCycle(t *testing.T) {
	done := arm("", "")
	if done == nil {
		t.Fatal("arm did nothing with neither GOGC nor GOMEMLIMIT set")
	}
	if p, limit := gcPercent(), debug.SetMemoryLimit(-1); p != -1 || limit != Floor {
		t.Fatalf("armed: GOGC %d and memory limit %d, want off (-1) and %d", p, limit, Floor)
	}
	runtime.GC()
	<-done
	if p, limit := gcPercent(), debug.SetMemoryLimit(-1); p != 100 || limit != math.MaxInt64 {
		t.Fatalf("after the first cycle: GOGC %d and memory limit %d, want 100 and none", p, limit)
	}
}

// TestTheEnvironmentWins: with GOGC or GOMEMLIMIT set, the operator's setting is left alone.
func TestTheEnvironmentWins(t *testing.T) {
	debug.SetGCPercent(100)
	for _, env := range [][2]string{{"50", ""}, {"", "1GiB"}, {"off", "512MiB"}} {
		if done := arm(env[0], env[1]); done != nil {
			t.Errorf("arm(GOGC=%q, GOMEMLIMIT=%q) changed the collector", env[0], env[1])
		}
		if p := gcPercent(); p != 100 {
			t.Errorf("arm(GOGC=%q, GOMEMLIMIT=%q): GOGC is %d, want it untouched (100)", env[0], env[1], p)
		}
	}
}
