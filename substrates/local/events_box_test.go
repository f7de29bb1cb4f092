package local

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/ghevent"
	"github.com/autonomyhq/autonomy/ir"
)

// TestBoxEvents: policy.box.local.events and maintainers are validated, each problem at its
// place with the fix; the defaults fill an installation with event triggers.
func TestBoxEvents(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ box, want string }{
		{"{ events: { poll_seconds: 1 } }", `ir.yml:9:38: policy.box.local.events.poll_seconds is 1; it must be between 10 and 3600`},
		{"{ events: { poll_seconds: soon } }", `policy.box.local.events.poll_seconds must be a whole number`},
		{"{ events: { repo: acme } }", `ir.yml:9:30: policy.box.local.events.repo "acme" is not owner/name (write the repository as owner/name`},
		{"{ events: { trustedRoles: [OWNER, CONTRIBUTOR] } }", `policy.box.local.events.trustedRoles: "CONTRIBUTOR" is not a trusted role (CONTRIBUTOR includes people outside`},
		{"{ events: { trustedRoles: [] } }", `events.trustedRoles is empty`},
		{"{ events: { pol_seconds: 5 } }", `ir.yml:9:24: policy.box.local.events: unknown key "pol_seconds" (did you mean "poll_seconds"?)`},
		{"{ events: 60 }", `policy.box.local.events must be a mapping`},
		{"{ maintainers: [alice, 'b c'] }", `policy.box.local.maintainers: "b c" is not a name`},
	} {
		_, err := compileBox(t, c.box)
		var diags ir.Diagnostics
		if !errors.As(err, &diags) || !strings.Contains(diags.Error(), c.want) {
			t.Errorf("%s:\n got: %v\nwant: %s", c.box, err, c.want)
		}
	}
	rc, err := compileBox(t, "{ events: { poll_seconds: 30, repo: acme/app, trustedRoles: [OWNER] }, maintainers: [alice, bob] }")
	if err != nil {
		t.Fatal(err)
	}
	if rc.Events != nil {
		t.Errorf("an installation without event triggers has events %+v", rc.Events)
	}
	in, err := Open(installFleet(t, eventFleet, false))
	if err != nil {
		t.Fatal(err)
	}
	ev := in.Runner.Events
	if ev == nil || ev.CodeHost != "github" || ev.PollSeconds != 10 || ev.Repo != "acme/app" || !slices.Equal(ev.TrustedRoles, ghevent.TrustedRoles) {
		t.Errorf("events %+v, want github, 10s, acme/app and the default roles", ev)
	}
}
