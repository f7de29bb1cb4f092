package agentcli

import (
	"os"
	"testing"
)

// Require returns the pinned program of a preset for a test. When the CLI is
// missing it skips the test, unless AUTONOMY_AGENT_SMOKE=1 is set: then the
// test fails with the install command, so CI never hides a missing agent
// behind a skip.
func Require(t testing.TB, preset string) string {
	t.Helper()
	p, ok := Lookup(preset)
	if !ok {
		t.Fatalf("unknown agent preset %q (known: %s)", preset, presetNames())
	}
	path, err := Find(preset, p.Version)
	if err != nil {
		if os.Getenv(SmokeEnv) == "1" {
			t.Fatalf("%s=1 and %v (or run scripts/install-agents.sh)", SmokeEnv, err)
		}
		t.Skipf("%v (set %s=1 to make this a failure)", err, SmokeEnv)
	}
	return path
}
