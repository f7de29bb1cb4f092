//go:build unix

package main

import (
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/substrates/local"
)

const forgeFleet = `schema: autonomy.ir.v1
targets: [local]
actors:
  boss:
    behavior: scripts/idle.sh
    capabilities: [agent:launch]
    triggers: [{ dispatch: true }]
  w:
    behavior: scripts/quick.sh
    triggers: [{ dispatch: true, params: { ROLE: subject.actorRole, WHO: subject.actor } }]
`

// From a session, a --param bound to subject.actorRole is refused (the documented example);
// the fleet's pause refuses a launch, names the resume command, and shows in list.
func TestRunnerForgeryAndPauseCLI(t *testing.T) {
	dir := runnerFleet(t, forgeFleet, map[string]string{"scripts/idle.sh": "#!/bin/sh\nsleep 300\n", "scripts/quick.sh": "#!/bin/sh\n" + scriptDone})
	out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "boss")
	if code != 0 {
		t.Fatalf("launch boss: %d %s", code, errOut)
	}
	boss := strings.TrimSpace(out)
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	defer waitAllEnded(t, st, 2)
	defer cli(t, nil, "runner", "--dir", dir, "cancel", boss)
	_, errOut, code = cli(t, []string{"AUTONOMY_SESSION=" + boss}, "runner", "--dir", dir, "launch", "w", "--param", "ROLE=OWNER")
	if code != 1 || !strings.Contains(errOut, "denied:") || !strings.Contains(errOut, "--param ROLE (bound to subject.actorRole)") {
		t.Fatalf("a forged ROLE from a session: exit %d: %s", code, errOut)
	}

	if _, errOut, code = cli(t, nil, "runner", "--dir", dir, "pause", "--reason", "the bill spiked"); code != 0 {
		t.Fatalf("pause: %d %s", code, errOut)
	}
	_, errOut, code = cli(t, nil, "runner", "--dir", dir, "launch", "w")
	if code != 1 || !strings.Contains(errOut, "the fleet is paused") || !strings.Contains(errOut, "autonomy runner resume") {
		t.Fatalf("launch while paused: exit %d: %s", code, errOut)
	}
	if _, errOut, code = cli(t, []string{"AUTONOMY_SESSION=" + boss}, "runner", "--dir", dir, "resume"); code != 1 || !strings.Contains(errOut, "denied:") {
		t.Fatalf("a session resumed the fleet: exit %d: %s", code, errOut)
	}
	if out, _, _ = cli(t, nil, "runner", "--dir", dir, "list"); !strings.Contains(out, "paused: fleet since") || !strings.Contains(out, "the bill spiked") {
		t.Fatalf("list does not show the pause:\n%s", out)
	}
	if _, errOut, code = cli(t, nil, "runner", "--dir", dir, "resume"); code != 0 {
		t.Fatalf("resume: %d %s", code, errOut)
	}
	if _, errOut, code = cli(t, nil, "runner", "--dir", dir, "resume"); code != 1 || !strings.Contains(errOut, "fleet is not paused") {
		t.Fatalf("resume twice: %d %s", code, errOut)
	}
	if _, errOut, code = cli(t, nil, "runner", "--dir", dir, "launch", "w"); code != 0 {
		t.Fatalf("launch after the resume: %d %s", code, errOut)
	}
}
