//go:build unix

package local

import (
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// Done is verified, never presumed: a skill whose agent exits 0 without a result ends failed,
// naming what is missing; one that opts out (result: { schema: none }) is done on its exit status,
// said to be weaker. So is a script: one that exits 0 without a result, with one that does not
// validate, or with one that says failed ends failed; with a valid result (written where
// AUTONOMY_RESULT says) done; one that opts out is done on its exit status.
func TestExitStatusAloneIsNotDone(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  silent:
    behavior: skills/work
    triggers: [{ dispatch: true }]
  trusting:
    behavior: skills/work
    triggers: [{ dispatch: true }]
    result: { schema: none }
  script:
    behavior: scripts/ok.sh
    triggers: [{ dispatch: true }]
  invalid:
    behavior: scripts/invalid.sh
    triggers: [{ dispatch: true }]
  gaveup:
    behavior: scripts/gaveup.sh
    triggers: [{ dispatch: true }]
  delivers:
    behavior: scripts/delivers.sh
    triggers: [{ dispatch: true }]
  legacy:
    behavior: scripts/ok.sh
    triggers: [{ dispatch: true }]
    result: { schema: none }
policy:
  box:
    local:
      agent: [/bin/sh, -c, 'cat > /dev/null']
`, files: map[string]string{"skills/work/SKILL.md": "# work\nDo it.\n", "scripts/ok.sh": "#!/bin/sh\ntrue\n",
		"scripts/invalid.sh":  "#!/bin/sh\necho '{\"status\":\"finished\"}' > \"$AUTONOMY_RESULT\"\n",
		"scripts/gaveup.sh":   "#!/bin/sh\necho '{\"status\":\"failed\",\"summary\":\"nothing to sweep\"}' > \"$AUTONOMY_RESULT\"\n",
		"scripts/delivers.sh": "#!/bin/sh\n" + scriptDone}}, false)
	r := newRunner(t, dir, Options{})
	for _, c := range []struct {
		actor  string
		status ir.SessionStatus
		want   string
	}{
		{"silent", ir.Failed, "exit status 0 but no result: the session did not call submit_result"},
		{"trusting", ir.Done, "exit status 0 only: the actor opts out of a result (result: { schema: none }), which is weaker"},
		{"script", ir.Failed, "exit status 0 but no result"},
		{"invalid", ir.Failed, "the result does not satisfy autonomy.result.v1"},
		{"gaveup", ir.Failed, "the agent reported its work failed: nothing to sweep"},
		{"delivers", ir.Done, "exit status 0 and the result (delivered by"},
		{"legacy", ir.Done, "exit status 0 only: the actor opts out of a result (result: { schema: none }), which is weaker"},
	} {
		s := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: c.actor}).ID)
		if s.Status != c.status || !strings.Contains(s.Reason+s.Verified, c.want) {
			t.Errorf("%s: %s (%s | %s), want %s with %q", c.actor, s.Status, s.Reason, s.Verified, c.status, c.want)
		}
	}
	r.Wait()
}
