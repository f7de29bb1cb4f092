package gcfloor

import (
	"runtime/debug"
	"testing"
)

// TestExpectOnlyInAOneShotCommand: Expect advises nothing in a command that is not one-shot
// (a supervisor, serve, compile --watch), below ExpectMin, or when GODEBUG turns huge pages off.
func TestExpectOnlyInAOneShotCommand(t *testing.T) {
	restoreCollector(t)
	unsetEnv(t, "GODEBUG")
	if Expect(ExpectMax) != 0 {
		t.Error("Expect advised huge pages outside a one-shot command")
	}
	OneShot()
	if Expect(ExpectMin-1) != 0 {
		t.Error("Expect advised huge pages below ExpectMin")
	}
	t.Setenv("GODEBUG", "madvdontneed=1,disablethp=1")
	if Expect(ExpectMin) != 0 {
		t.Error("Expect advised huge pages with GODEBUG=disablethp=1")
	}
}

func TestThpDisabledReadsGODEBUGAsTheRuntimeDoes(t *testing.T) {
	for godebug, want := range map[string]bool{
		"":                            false,
		"disablethp=1":                true,
		"gctrace=1, disablethp=1":     true,
		"disablethp=1,disablethp=0":   false,
		"disablethp=0":                false,
		"xdisablethp=1":               false,
		"madvdontneed=1,disablethp=2": true,
	} {
		if got := thpDisabled(godebug); got != want {
			t.Errorf("thpDisabled(%q) = %v, want %v", godebug, got, want)
		}
	}
}

// TestExpectKeepsUnderHalfTheMemoryLimit: with the operator's GOMEMLIMIT below twice ExpectMin,
// Expect asks for less than ExpectMin, so it does nothing.
func TestExpectKeepsUnderHalfTheMemoryLimit(t *testing.T) {
	restoreCollector(t)
	unsetEnv(t, "GODEBUG")
	t.Setenv("GOMEMLIMIT", "12MiB")
	OneShot()
	debug.SetMemoryLimit(12 << 20)
	if Expect(ExpectMax) != 0 {
		t.Error("Expect asked for more than half of a 12 MiB memory limit")
	}
}
