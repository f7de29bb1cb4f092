//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	// runner list says the session waits for a person, whom and what.
	if out := listAsks(t, dir); !strings.Contains(out, "WAITING FOR") || !strings.Contains(out, "approver (a person): decide: which one?") {
		t.Errorf("runner list does not show what the ask waits for:\n%s", out)
	}
	// And --format json, for scripts, in waitingFor.
	out, _, _ = cli(t, nil, "runner", "--dir", dir, "list", "--format", "json")
	var listed struct {
		Sessions []struct {
			ID         string `json:"id"`
			WaitingFor string `json:"waitingFor"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed.Sessions) != 1 || listed.Sessions[0].ID != id ||
		listed.Sessions[0].WaitingFor != "approver (a person): decide: which one?" {
		t.Errorf("runner list --format json: %v, want the session waiting for approver's decision\n%s", err, out)
	}
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

const simFleetYAML = `schema: autonomy.ir.v1
targets: [local]
actors:
  releaser:
    behavior: scripts/release.sh
    capabilities: [agent:launch@approver, agent:list@approver]
    triggers: [{ dispatch: true }]
  approver:
    kind: human
    behavior: humans/approver.md
    triggers: [{ dispatch: true }]
`

// releaseScript asks the approver (a typed approval) and waits for its answer: done ships,
// anything else fails.
const releaseScript = `#!/bin/sh
id=$(autonomy runner launch approver --type approve --in "v2 is built and tested" --out "go or no-go" | head -n 1)
[ -n "$id" ] || exit 3
while :; do
  st=$(autonomy runner get "$id" --format json | sed -n 's/^  "status": "\([a-z]*\)",$/\1/p')
  case "$st" in
    done)
      echo shipped > "$AUTONOMY_DIR/shipped"
      printf '{"status":"done","summary":"shipped"}\n' > "$AUTONOMY_RESULT"
      exit 0 ;;
    failed|cancelled) exit 1 ;;
  esac
  sleep 0.1
done
`

// TestRunnerHumanSimulatorFleet: a fleet with a human approval step runs end to end without a
// person: runner tick --humans registers the fixtures, the releaser's own runner launch asks the
// approver, a later tick answers it through the ask's token, and the releaser, which waited on
// the answer, ends done. With the fixture "never", the ask stays open and the releaser waits.
func TestRunnerHumanSimulatorFleet(t *testing.T) {
	for _, c := range []struct {
		name, fixture string
		ships         bool
	}{{"approves", "approver:\n  - { type: approve, choose: approve }\n", true}, {"never", "approver:\n  - { never: true }\n", false}} {
		t.Run(c.name, func(t *testing.T) {
			dir := runnerFleet(t, simFleetYAML, map[string]string{"scripts/release.sh": releaseScript, "humans/approver.md": "# Go or no-go\n"})
			fx := filepath.Join(t.TempDir(), "humans.yml")
			if err := os.WriteFile(fx, []byte(c.fixture), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "tick", "--humans", fx); code != 0 || !strings.Contains(errOut, "the human simulator of") {
				t.Fatalf("tick --humans: %d %s", code, errOut)
			}
			rel, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "releaser")
			if code != 0 {
				t.Fatalf("launch releaser: %d %s", code, errOut)
			}
			rel = strings.TrimSpace(rel)
			defer cli(t, nil, "runner", "--dir", dir, "cancel", rel)
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				out, _, _ := cli(t, nil, "runner", "--dir", dir, "tick")
				if strings.Contains(out, "the human simulator answered") || !c.ships && strings.Count(listAsks(t, dir), "approver") > 0 {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if !c.ships {
				time.Sleep(500 * time.Millisecond)
				if out, _, _ := cli(t, nil, "runner", "--dir", dir, "tick"); strings.Contains(out, "answered") {
					t.Fatalf("a never fixture answered: %s", out)
				}
				if _, err := os.Stat(filepath.Join(dir, "shipped")); err == nil {
					t.Fatal("shipped without an answer")
				}
				return
			}
			for time.Now().Before(deadline) {
				if out, _, _ := cli(t, nil, "runner", "--dir", dir, "get", rel); strings.Contains(out, "status:    done") {
					if _, err := os.Stat(filepath.Join(dir, "shipped")); err != nil {
						t.Fatal("done without shipping")
					}
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
			out, _, _ := cli(t, nil, "runner", "--dir", dir, "list", "--all")
			t.Fatalf("the releaser did not end done:\n%s", out)
		})
	}
}

// listAsks is runner list's output.
func listAsks(t *testing.T, dir string) string {
	out, _, _ := cli(t, nil, "runner", "--dir", dir, "list")
	return out
}

// TestRunnerNoSessionSaysWhereTheIdsAre: a session id the store does not hold (say the ID of a
// command's help, pasted as it is) names where the ids are, for get, update and cancel alike.
func TestRunnerNoSessionSaysWhereTheIdsAre(t *testing.T) {
	t.Parallel()
	dir := runnerFleet(t, trivialFleet, map[string]string{"scripts/work.sh": "#!/bin/sh\n" + scriptDone})
	for _, args := range [][]string{{"get", "ID"}, {"update", "ID", "--token", "T", "--answer", "x"}, {"cancel", "ID"}, {"logs", "ID"}} {
		_, errOut, code := cli(t, nil, append([]string{"runner", "--dir", dir}, args...)...)
		if code != 1 || !strings.Contains(errOut, "no session ID (runner list shows the sessions and their ids)") {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
}
