package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/substrates"
)

// writeCounter counts the writes that reach it, as the system counts them on stdout.
type writeCounter struct {
	strings.Builder
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Builder.Write(p)
}

// TestPrintPlanBuffersStdout: the plan of a large install reaches stdout in a few writes, not one
// a file, and before the summary on stderr.
func TestPrintPlanBuffersStdout(t *testing.T) {
	plan := make(substrates.Plan, 1000)
	for i := range plan {
		plan[i] = substrates.Change{Path: fmt.Sprintf(".github/workflows/a-%d.yml", i), Op: substrates.Create}
	}
	var out, errOut writeCounter
	printPlan(&out, &errOut, plan, "gh-actions", "repo", false)
	if got := strings.Count(out.String(), "\n"); got != 1000 {
		t.Fatalf("%d lines on stdout, want 1000", got)
	}
	if !strings.HasPrefix(out.String(), "create repo/.github/workflows/a-0.yml\n") {
		t.Errorf("stdout starts %q", out.String()[:60])
	}
	if out.writes > 2 {
		t.Errorf("%d writes to stdout for 1,000 files, want at most 2", out.writes)
	}
	if errOut.String() != "gh-actions: 1000 created, 0 updated, 0 deleted, 0 unchanged in repo\n" {
		t.Errorf("stderr: %q", errOut.String())
	}
}
