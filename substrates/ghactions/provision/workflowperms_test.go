package provision

import (
	"context"
	"testing"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghfake"
)

func runWorkflowPermissions(t *testing.T, c *github.Client, dry bool) []Step {
	t.Helper()
	pv := &provisioner{c: c, owner: "o", repo: "r", dry: dry}
	pv.workflowPermissions(context.Background())
	if len(pv.errs) > 0 {
		t.Fatal(pv.errs[0])
	}
	return pv.steps
}

// TestWorkflowPermissionsNarrowsWrite: a write default (every workflow without a permissions:
// block holds actions: write, and can dispatch the fleet as github-actions[bot]) is planned, then
// narrowed to read, saying what it means; allowing Actions to create pull requests does not undo
// it; a second run changes nothing.
func TestWorkflowPermissionsNarrowsWrite(t *testing.T) {
	s, c := envFake(t, "", nil)
	s.SetSettings(ghfake.Settings{DefaultWorkflowPermissions: "write"})
	steps := runWorkflowPermissions(t, c, true)
	if len(steps) != 2 || steps[0].Action != "update" || steps[0].From != "write" || steps[0].To != "read" || steps[0].Note != ReadOnlyDefaultNote {
		t.Fatalf("dry run steps %+v", steps)
	}
	if st := s.CurrentSettings(); st.DefaultWorkflowPermissions != "write" || puts(s) != 0 {
		t.Fatalf("the dry run changed %+v", st)
	}
	runWorkflowPermissions(t, c, false)
	if st := s.CurrentSettings(); st.DefaultWorkflowPermissions != "read" || !st.CanApprovePullRequestReviews {
		t.Fatalf("settings after provision %+v, want read and pull requests allowed", st)
	}
	if got := actions(runWorkflowPermissions(t, c, false)); got != "ok actions: default workflow token permissions; ok actions: allow GitHub Actions to create and approve pull requests" {
		t.Errorf("second run: %s", got)
	}
}

// TestWorkflowPermissionsLeavesRead: a read default is already so and never written.
func TestWorkflowPermissionsLeavesRead(t *testing.T) {
	s, c := envFake(t, "", nil)
	s.SetSettings(ghfake.Settings{DefaultWorkflowPermissions: "read", CanApprovePullRequestReviews: true})
	steps := runWorkflowPermissions(t, c, false)
	if actions(steps) != "ok actions: default workflow token permissions; ok actions: allow GitHub Actions to create and approve pull requests" || puts(s) != 0 {
		t.Fatalf("steps %+v, %d PUTs", steps, puts(s))
	}
}
