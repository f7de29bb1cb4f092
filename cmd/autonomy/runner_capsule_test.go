//go:build unix

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local"
)

const signOffCapsule = `---
type: playbook
title: Apply the migration
version: "1.0"
status: active
owner: team
readers: [agent]
scope: single-session
tags: [ops]
trigger: migration-asked
created: 2026-05-20
locked_by: lead
locked_at: 2026-05-22
---

## Intent

Apply the migration, so the schema is current.

## Rules

- The agent MUST write what it changed to its result.

## Steps

1. Apply the migration.
2. Report what changed.

## Outcomes

- [REQUIRED] the migration is applied

## Verification

method: human-sign-off

A maintainer signs the change off.
`

var signOffToken = regexp.MustCompile(`--token (stk_[A-Za-z0-9_-]+) --approve`)

// TestRunnerCapsuleSignOff: through the binary (detached supervisors, real processes), an agent
// whose capsule playbook says human-sign-off succeeds and its session waits (list shows it); a
// wrong token and --status done change nothing; the token signs it off, once.
func TestRunnerCapsuleSignOff(t *testing.T) {
	t.Parallel()
	agent := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\ncat > /dev/null\necho applied >> \"$AUTONOMY_DIR/applied\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	yml := `schema: autonomy.ir.v1
targets: [local]
actors:
  migrator:
    behavior: pb/migrate.playbook.md
    triggers: [{ dispatch: true }]
    result: { schema: none } # the sign-off, not the result, is under test
policy:
  box:
    local: { agent: [` + agent + `] }
`
	dir := runnerFleet(t, yml, map[string]string{"pb/migrate.playbook.md": signOffCapsule})
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "migrator")
	if code != 0 {
		t.Fatalf("launch: %d %s", code, errOut)
	}
	id := strings.Fields(out)[0]
	s := waitParked(t, st, id)
	if s.Status != ir.Paused {
		t.Fatalf("session %s: %s (%s), not waiting for its sign-off", id, s.Status, s.Reason)
	}
	if out, _, _ := cli(t, nil, "runner", "--dir", dir, "list"); !strings.Contains(out, "verification human-sign-off") {
		t.Errorf("list does not show the wait:\n%s", out)
	}
	log, _ := os.ReadFile(s.LogPath)
	m := signOffToken.FindStringSubmatch(string(log))
	if m == nil {
		t.Fatalf("no sign-off token in the log:\n%s", log)
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--token", m[1]+"x", "--approve"); code != 1 || !strings.Contains(errOut, "token does not resume") {
		t.Errorf("wrong token: exit %d %s", code, errOut)
	}
	if _, _, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--status", "done"); code != 1 {
		t.Errorf("--status done on a session waiting for its sign-off: exit %d", code)
	}
	// A sign-off continues no agent: it is taken from any environment, even one a launch of
	// the actor would be refused in.
	noAgent := []string{local.AgentEnv + "=not a list"}
	if out, errOut, code := cli(t, noAgent, "runner", "--dir", dir, "update", id, "--token", m[1], "--approve", "--evidence", "checked the schema"); code != 0 || strings.TrimSpace(out) != id+" done" {
		t.Fatalf("sign-off: exit %d %q %s", code, out, errOut)
	}
	if _, _, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--token", m[1], "--approve"); code != 1 {
		t.Errorf("a used token: exit %d", code)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "applied")); string(got) != "applied\n" {
		t.Errorf("the agent ran %q (once expected)", got)
	}
}
