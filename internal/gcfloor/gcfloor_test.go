package gcfloor

import (
	"math"
	"os"
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

// TestOneShotReplacesTheDefaultsAfterTheFloor: a one-shot command's settings survive the floor's
// lifting (which once put GOGC=100 back over them at the first cycle), and the floor holds until
// then.
func TestOneShotReplacesTheDefaultsAfterTheFloor(t *testing.T) {
	restoreCollector(t)
	unsetEnv(t, "GOGC")
	unsetEnv(t, "GOMEMLIMIT")
	done := arm("", "")
	OneShot()
	if p, limit := gcPercent(), debug.SetMemoryLimit(-1); p != -1 || limit != Floor {
		t.Fatalf("after OneShot under the floor: GOGC %d and memory limit %d, want off (-1) and %d", p, limit, Floor)
	}
	runtime.GC()
	<-done
	if p, limit := gcPercent(), debug.SetMemoryLimit(-1); p != OneShotPercent || limit != OneShotLimit {
		t.Fatalf("after the first cycle: GOGC %d and memory limit %d, want %d and %d", p, limit, OneShotPercent, OneShotLimit)
	}
}

// TestOneShotWithoutTheFloor: with the floor lifted, OneShot sets its values at once, each
// unless the environment sets it.
func TestOneShotWithoutTheFloor(t *testing.T) {
	restoreCollector(t)
	unsetEnv(t, "GOMEMLIMIT")
	done := arm("", "")
	runtime.GC()
	<-done
	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	OneShot()
	if p, limit := gcPercent(), debug.SetMemoryLimit(-1); p != 150 || limit != OneShotLimit {
		t.Fatalf("GOGC %d and memory limit %d, want the environment's 150 and %d", p, limit, OneShotLimit)
	}
}

// TestOneShotTakesAnEmptySettingAsUnset: GOGC= and GOMEMLIMIT= set but empty are unset for the
// runtime, and so for OneShot: its values apply (they were taken for the user's own tuning, and
// the command ran with GOGC 100 and no limit).
func TestOneShotTakesAnEmptySettingAsUnset(t *testing.T) {
	restoreCollector(t)
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	done := arm("", "")
	runtime.GC()
	<-done
	OneShot()
	if p, limit := gcPercent(), debug.SetMemoryLimit(-1); p != OneShotPercent || limit != OneShotLimit {
		t.Fatalf("GOGC %d and memory limit %d, want %d and %d", p, limit, OneShotPercent, OneShotLimit)
	}
}

// restoreCollector puts back the collector's settings, and what the floor lifts to, when t ends.
func restoreCollector(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
		after.Lock()
		after.percent, after.limit, after.armed, after.oneShot, after.expected = 100, math.MaxInt64, false, false, false
		after.Unlock()
	})
}

// unsetEnv removes name from the environment for t.
func unsetEnv(t *testing.T, name string) {
	t.Setenv(name, "")
	os.Unsetenv(name)
}
