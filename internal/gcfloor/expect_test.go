package gcfloor

import "testing"

// TestExpectOnlyInAOneShotCommand: Expect advises nothing in a command that is not one-shot
// (a supervisor, serve, compile --watch), below ExpectMin, or when GODEBUG turns huge pages off.
func TestExpectOnlyInAOneShotCommand(t *testing.T) {
	restoreCollector(t)
	unsetEnv(t, "GODEBUG")
	if Expect(ExpectMax) {
		t.Error("Expect advised huge pages outside a one-shot command")
	}
	OneShot()
	if Expect(ExpectMin - 1) {
		t.Error("Expect advised huge pages below ExpectMin")
	}
	t.Setenv("GODEBUG", "madvdontneed=1,disablethp=1")
	if Expect(ExpectMin) {
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
