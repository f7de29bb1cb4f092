// Package agentclitest holds what tests need of the pinned agent CLIs: the program of a preset,
// or a skip (a failure under AUTONOMY_AGENT_SMOKE=1), and a bounded run of it. It is apart from
// agentcli so that the autonomy binary, which links agentcli, does not link package testing.
package agentclitest

import (
	"os"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agentcli"
)

// Require returns the pinned program of a preset for a test. When the CLI is
// missing it skips the test, unless AUTONOMY_AGENT_SMOKE=1 is set: then the
// test fails with the install command, so CI never hides a missing agent
// behind a skip.
func Require(t testing.TB, preset string) string {
	t.Helper()
	p, ok := agentcli.Lookup(preset)
	if !ok {
		_, err := agentcli.Find(preset, "") // names the presets there are
		t.Fatal(err)
	}
	path, err := agentcli.Find(preset, p.Version)
	if err != nil {
		if os.Getenv(agentcli.SmokeEnv) == "1" {
			t.Fatalf("%s=1 and %v (or run scripts/install-agents.sh)", agentcli.SmokeEnv, err)
		}
		t.Skipf("%v (set %s=1 to make this a failure)", err, agentcli.SmokeEnv)
	}
	return path
}
