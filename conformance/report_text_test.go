package conformance

import (
	"strings"
	"testing"
)

// TestTextSaysARunnerNotRunOnce: a runner none of whose checks ran, all for one reason, gets one
// line saying so with the count; a runner with any check run, or not run for several reasons,
// gets a line per check.
func TestTextSaysARunnerNotRunOnce(t *testing.T) {
	const why = "not run: pass --repo OWNER/NAME"
	r := Report{
		Runners: []Target{{Name: "github", Substrate: "gh-actions"}, {Name: "mixed", Substrate: "local"}},
		Checks:  []CheckInfo{{Name: "launch", Tier: Core}, {Name: "list", Tier: Core}},
		Results: []Result{
			{Target: "github", Check: "launch", Tier: Core, Outcome: NotProbed, Reason: why},
			{Target: "github", Check: "list", Tier: Core, Outcome: NotProbed, Reason: why},
			{Target: "mixed", Check: "launch", Tier: Core, Outcome: NotProbed, Reason: why},
			{Target: "mixed", Check: "list", Tier: Core, Outcome: NotProbed, Reason: "another"},
		},
	}
	var b strings.Builder
	if err := r.Text(&b); err != nil {
		t.Fatal(err)
	}
	want := "runner github (gh-actions)\n  not probed (2 checks): " + why + "\nrunner mixed (local)\n" +
		"  core      launch                 not probed: " + why + "\n  core      list                   not probed: another\n"
	if !strings.HasPrefix(b.String(), want) {
		t.Errorf("got\n%s\nwant it to start\n%s", b.String(), want)
	}
}
