package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRunnerTypedAskCLI: launch --type decide records the handoff, get shows it, a bad
// --choice exits 1 and changes nothing, --confirm records the receipt, and the resolution's
// choice, reply and who made it show in get --format json.
func TestRunnerTypedAskCLI(t *testing.T) {
	dir := runnerFleet(t, seamYAML, map[string]string{"scripts/pm.sh": "#!/bin/sh\n", "scripts/work.sh": "#!/bin/sh\n", "humans/approver.md": "# Decide\n"})
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "approver", "--option", "A"); code != 2 || !strings.Contains(errOut, "--option types an ask") {
		t.Fatalf("--option without --type: %d %s", code, errOut)
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "approver", "--type", "decide", "--option", "A"); code != 2 || !strings.Contains(errOut, "two or more") {
		t.Fatalf("decide with one option: %d %s", code, errOut)
	}
	out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "approver", "--type", "decide", "--in", "two designs fit",
		"--question", "which one?", "--option", "A", "--option", "B", "--out", "why")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("launch: %d %q %s", code, out, errOut)
	}
	id, token := lines[0], lines[1]
	out, _, _ = cli(t, nil, "runner", "--dir", dir, "get", id)
	for _, want := range []string{"type:      decide", "in:        two designs fit", "question:  which one?", "option:    B", "confirmed: not yet"} {
		if !strings.Contains(out, want) {
			t.Errorf("get lacks %q:\n%s", want, out)
		}
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--status", "done", "--token", token, "--evidence", "x", "--choice", "C"); code != 1 || !strings.Contains(errOut, "one of: A, B") {
		t.Fatalf("a choice off the options: %d %s", code, errOut)
	}
	if out, errOut, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--confirm", "--token", token); code != 0 || !strings.Contains(out, "confirmed by the operator") {
		t.Fatalf("confirm: %d %s %s", code, out, errOut)
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--status", "done", "--token", token, "--evidence", "B needs no migration", "--choice", "B", "--reply", "cheaper"); code != 0 {
		t.Fatalf("resolve: %d %s", code, errOut)
	}
	out, _, _ = cli(t, nil, "runner", "--dir", dir, "get", id, "--format", "json")
	var got struct {
		Status  string `json:"status"`
		Handoff struct {
			Type, Choice, Answer, By, ConfirmedBy string
		} `json:"handoff"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err, out)
	}
	if got.Status != "done" || got.Handoff.Type != "decide" || got.Handoff.Choice != "B" || got.Handoff.Answer != "cheaper" || got.Handoff.By != "the operator" || got.Handoff.ConfirmedBy != "the operator" {
		t.Fatalf("get --format json: %s", out)
	}
}
