//go:build unix

package local

import (
	"context"
	"strings"
	"testing"
)

// doctor says a script behavior whose interpreter is missing cannot run (a launch of it is
// refused), once per cause, naming the actors it stops: it said "ok" to all, and the first launch
// failed (the reference's hello-human runs bun).
func TestDoctorChecksScriptInterpreters(t *testing.T) {
	dir := installFleet(t, fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  a:
    behavior: scripts/a.ts
    triggers: [{ dispatch: true }]
  b:
    behavior: scripts/b.ts
    triggers: [{ dispatch: true }]
  c:
    behavior: scripts/c.sh
    triggers: [{ dispatch: true }]
`, files: map[string]string{
		"scripts/a.ts": "#!/usr/bin/env bun\nconsole.log('a')\n",
		"scripts/b.ts": "#!/usr/bin/env bun\nconsole.log('b')\n",
		"scripts/c.sh": "#!/bin/sh\ntrue\n" + scriptDone,
	}}, false)
	var bad []Check
	for _, c := range Doctor(context.Background(), dir, []string{"PATH=/usr/bin:/bin"}) {
		if c.Name == "script interpreter" {
			bad = append(bad, c)
		}
	}
	if len(bad) != 1 || bad[0].OK || !strings.Contains(bad[0].Detail, "its #! line runs bun, which is not on PATH (the behavior of a, b)") || !strings.Contains(bad[0].Fix, "Bun") {
		t.Fatalf("script checks %+v, want one, not OK, naming a and b", bad)
	}
	r := newRunner(t, dir, Options{Env: []string{"PATH=/usr/bin:/bin"}})
	if _, err := r.Launch(context.Background(), LaunchRequest{Actor: "a"}); err == nil || !strings.Contains(err.Error(), "its #! line runs bun, which is not on PATH") {
		t.Errorf("the launch doctor warned of: %v", err)
	}
}
