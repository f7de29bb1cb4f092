//go:build unix

package local

import (
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// A session's git reads no graft file (GIT_GRAFT_FILE=/dev/null) and says nothing of it: git
// printed a five-line hint about grafts in each command that reads commits, in every log.
func TestASessionsGitPrintsNoGraftHint(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  reader:
    behavior: scripts/read.sh
    triggers: [{ dispatch: true }]
`, files: map[string]string{"scripts/read.sh": "#!/bin/sh\nset -e\ngit log -1 --format='last: %s'\ngit rev-list --count HEAD\n" + scriptDone}}, true)
	gitRun(t, dir, "-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "-q", "--allow-empty", "-m", "first")
	r := newRunner(t, dir, Options{})
	s := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "reader"}).ID)
	log := sessionLogOf(r, s.ID)
	if s.Status != ir.Done || !strings.Contains(log, "last: first") {
		t.Fatalf("the session ended %s: %s\n%s", s.Status, s.Reason, log)
	}
	if strings.Contains(log, "graft") {
		t.Errorf("the session's log speaks of grafts:\n%s", log)
	}
}
