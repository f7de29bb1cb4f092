package conformance

import (
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/substrates"
)

// TestObserveMarksCells: a passing check observes its features on its runner's substrate; a
// failing one unverifies a supported cell; a cell no check observed is declared only, saying why;
// an unsupported cell is left alone.
func TestObserveMarksCells(t *testing.T) {
	targets := []Target{{Name: "a exec", Substrate: "a"}, {Name: "b exec", Substrate: "b"}, {Name: "c exec", Substrate: "c", Skip: "needs --repo"}}
	cell := func(sub, feature string, lv substrates.Level) Cell {
		return Cell{Feature: feature, Substrate: sub, Level: lv, Verified: true}
	}
	matrix := []Cell{
		cell("a", "trigger:cron", substrates.Supported),
		cell("b", "trigger:cron", substrates.Supported),
		cell("a", "capability:@scope", substrates.Partial),
		cell("a", "field:prelaunch", substrates.Supported),
		cell("a", "trigger:event", substrates.Unsupported),
		cell("c", "trigger:cron", substrates.Supported),
		cell("b", "kind:human", substrates.Supported),
	}
	results := []Result{
		{Target: "a exec", Check: "cron-fires", Outcome: Pass, Observed: "fired"},
		{Target: "b exec", Check: "cron-fires", Outcome: Fail, Reason: "fired at 06:16:59"},
		{Target: "a exec", Check: "scope-refused", Outcome: NotProbed, Reason: "no sessions here"},
		{Target: "c exec", Check: "cron-fires", Outcome: NotProbed, Reason: "needs --repo"},
		{Target: "b exec", Check: "never-done-by-itself", Outcome: Supported},
		{Target: "b exec", Check: "done-by-verified-act", Outcome: Unsupported, Reason: "no token"},
		{Target: "a exec", Check: "param-sources", Outcome: Fail, Reason: "ignored: it does not observe a's cells above"},
	}
	Observe(matrix, targets, results)
	if c := matrix[0]; !c.Verified || len(c.Observed) != 1 || c.Observed[0] != "cron-fires on a exec" || c.DeclaredOnly != "" {
		t.Errorf("observed cell: %+v", c)
	}
	if c := matrix[1]; c.Verified || !strings.Contains(c.Problem, "cron-fires on b exec found it fail: fired at 06:16:59") {
		t.Errorf("a failing check: %+v", c)
	}
	if c := matrix[2]; !c.Verified || c.DeclaredOnly != "scope-refused cannot observe it on a exec: no sessions here" {
		t.Errorf("a check not probed: %+v", c)
	}
	if c := matrix[3]; !c.Verified || c.DeclaredOnly != "no check of the battery observes it" {
		t.Errorf("a feature no check observes: %+v", c)
	}
	if c := matrix[5]; !c.Verified || c.DeclaredOnly != "its runners were not run: needs --repo" {
		t.Errorf("a runner not run: %+v", c)
	}
	if c := matrix[6]; !c.Verified || len(c.Observed) != 1 {
		t.Errorf("a check the runner answers unsupported does not unverify a cell another observed: %+v", c)
	}
	if c := matrix[4]; !c.Verified || c.DeclaredOnly != "" || c.Observed != nil {
		t.Errorf("an unsupported cell: %+v", c)
	}
}
