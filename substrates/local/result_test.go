//go:build unix

package local

import (
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// Done is verified, never presumed: a skill whose agent exits 0 without a result ends failed,
// naming what is missing; one that opts out (result: { schema: none }) is done on its exit status,
// said to be weaker; a script's exit status is its contract.
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
policy:
  box:
    local:
      agent: [/bin/sh, -c, 'cat > /dev/null']
`, files: map[string]string{"skills/work/SKILL.md": "# work\nDo it.\n", "scripts/ok.sh": "#!/bin/sh\ntrue\n"}}, false)
	r := newRunner(t, dir, Options{})
	for _, c := range []struct {
		actor  string
		status ir.SessionStatus
		want   string
	}{
		{"silent", ir.Failed, "exit status 0 but no result: the session did not call submit_result"},
		{"trusting", ir.Done, "exit status 0 only: the actor opts out of a result (result: { schema: none }), which is weaker"},
		{"script", ir.Done, "a script's exit status is its contract"},
	} {
		s := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: c.actor}).ID)
		if s.Status != c.status || !strings.Contains(s.Reason+s.Verified, c.want) {
			t.Errorf("%s: %s (%s | %s), want %s with %q", c.actor, s.Status, s.Reason, s.Verified, c.status, c.want)
		}
	}
	r.Wait()
}
