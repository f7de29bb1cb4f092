//go:build unix

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// TestRunnerWeavesOverlays: a local session of a skill actor is handed its skill with the
// profile's active overlays woven in, by priority; a shadow overlay and one that touches a locked
// trait are left out with audit lines in the session's log; runner get shows what was woven.
func TestRunnerWeavesOverlays(t *testing.T) {
	received := filepath.Join(t.TempDir(), "received.md")
	yml := `schema: autonomy.ir.v1
targets: [local]
actors:
  librarian:
    behavior: skills/librarian
    triggers: [{ dispatch: true }]
    result: { schema: none } # the woven skill, not the result, is under test
policy:
  box:
    local:
      agent: [/bin/sh, -c, 'cat > ` + received + `']
    persona:
      locked:
        - id: warmth
          blocks: [tone]
      maxOverlays: 5
`
	overlay := func(slug, front, body string) string {
		return "---\nschema: playbooks/v1\nslug: " + slug + "\ntitle: " + slug + "\ntargets: [{kind: role, ref: role/librarian}]\n" + front + "\n---\n" + body + "\n"
	}
	dir := runnerFleet(t, yml, map[string]string{
		"skills/librarian/SKILL.md": "# Librarian\n\n<!-- block: tone -->\nAnswer warmly.\n<!-- /block: tone -->\n\nCite every source.\n",
		"playbooks/cite.md":         overlay("cite-inline", "kind: overlay\nstatus: active\npriority: 40", "Quote the sentence you cite."),
		"playbooks/first.md":        overlay("contradictions", "kind: overlay\nstatus: active\npriority: 80", "Say so when two sources disagree."),
		"playbooks/shadow.md":       overlay("trial", "kind: overlay\nstatus: shadow", "A trial run."),
		"playbooks/role/terse.md":   overlay("terse", "kind: block-replacement\nblock: tone\nstatus: active", "Answer tersely."),
		"playbooks/other-role.md":   "---\nschema: playbooks/v1\nslug: other\ntitle: other\ntargets: [{kind: role, ref: role/clerk}]\nkind: overlay\nstatus: active\n---\nNot for the librarian.\n",
		"playbooks/_index.md":       "",
		"playbooks/README.md":       "The overlays of this fleet.\n",
	})
	out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "librarian")
	if code != 0 {
		t.Fatalf("launch: exit %d: %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sessions := waitAllEnded(t, st, 1)
	if sessions[0].Status != "done" {
		t.Fatalf("session %+v", sessions[0])
	}
	got, err := os.ReadFile(received)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Librarian\n\n<!-- block: tone -->\nAnswer warmly.\n<!-- /block: tone -->\n\nCite every source.\n\nSay so when two sources disagree.\n\nQuote the sentence you cite.\n"
	if string(got) != want {
		t.Fatalf("the agent received\n%s\nwant\n%s", got, want)
	}
	text, _, _ := cli(t, nil, "runner", "--dir", dir, "get", id)
	for _, line := range []string{
		"overlays:  2 overlays woven: contradictions (overlay, priority 80), cite-inline (overlay, priority 40)",
		"skipped:   ", " skip trial (", ": shadow: computed, never woven until promoted to active",
		" skip terse (.autonomy/playbooks/role/terse.md) for actor librarian", `: locked: replaces-locked-block: trait "warmth": it replaces block "tone"`,
	} {
		if !strings.Contains(text, line) {
			t.Errorf("runner get lacks %q:\n%s", line, text)
		}
	}
	if strings.Contains(text, "other") {
		t.Errorf("an overlay for another role is listed:\n%s", text)
	}
	js, _, _ := cli(t, nil, "runner", "--dir", dir, "get", id, "--format", "json")
	var v struct {
		Status   string
		Overlays struct {
			Woven   string
			Skipped []string
		}
	}
	if err := json.Unmarshal([]byte(js), &v); err != nil || !strings.HasPrefix(v.Overlays.Woven, "2 overlays woven") || len(v.Overlays.Skipped) != 2 {
		t.Errorf("json %v: %s", err, js)
	}
	logs, _, _ := cli(t, nil, "runner", "--dir", dir, "logs", id)
	if !strings.Contains(logs, "autonomy: ") || !strings.Contains(logs, "skip terse") {
		t.Errorf("the session log lacks the audit lines:\n%s", logs)
	}
	events, _ := st.Events(context.Background(), id, 0)
	kinds := []string{}
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	if !strings.Contains(strings.Join(kinds, ","), "woven,overlay-skipped,overlay-skipped") {
		t.Errorf("events %v", kinds)
	}
}

// TestPlaybookWeaveCommand: playbook weave gives the woven skill the runner would hand an agent,
// the audit lines on stderr and a job summary.
func TestPlaybookWeaveCommand(t *testing.T) {
	dir := playbookProfile(t)
	install := t.TempDir()
	if code, out, errOut := run(t, "compile", dir, "--target", "gh-actions", "--out", install); code != 0 {
		t.Fatalf("compile: exit %d\n%s%s", code, out, errOut)
	}
	skill := filepath.Join(t.TempDir(), "support", "SKILL.md")
	write(t, skill, "# Support\n\n<!-- block: tone -->\nBe brisk.\n<!-- /block: tone -->\n")
	summary := filepath.Join(t.TempDir(), "summary.md")
	code, out, errOut := run(t, "playbook", "weave", "--dir", install, "--actor", "release", "--skill", skill, "--substrate", "gh-actions", "--summary", summary, "--now", "2026-06-10T00:00:00Z")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// role/release matches flag-contradictions (active, ttl 30 days from 2026-06-01); skill/support
	// matches calmer-tone, which is a shadow overlay.
	if !strings.Contains(out, "When two pages disagree") || strings.Contains(out, "Answer crisis-flagged") {
		t.Errorf("woven skill:\n%s", out)
	}
	if !strings.Contains(errOut, "skip calmer-tone (.autonomy/playbooks/calmer-tone.md) for actor release: shadow") {
		t.Errorf("stderr:\n%s", errOut)
	}
	got, _ := os.ReadFile(summary)
	if !strings.Contains(string(got), "1. `flag-contradictions-explicitly` (overlay, priority 70)") {
		t.Errorf("summary:\n%s", got)
	}
	// After the ttl, the overlay expires.
	_, out, errOut = run(t, "playbook", "weave", "--dir", install, "--actor", "release", "--skill", skill, "--now", "2026-08-01T00:00:00Z")
	if strings.Contains(out, "When two pages disagree") || !strings.Contains(errOut, ": expired: ") {
		t.Errorf("after the ttl:\n%s\n%s", out, errOut)
	}
}

// TestLibrarianProfileWeave: the librarian example, installed, weaves as its README says: the
// sources block swapped, the contradictions overlay appended, the shadow one left out, the
// locked tone untouched.
func TestLibrarianProfileWeave(t *testing.T) {
	install := t.TempDir()
	if code, out, errOut := run(t, "compile", "../../profiles/librarian", "--target", "local", "--out", install); code != 0 {
		t.Fatalf("compile: exit %d\n%s%s", code, out, errOut)
	}
	skill := filepath.Join(install, ".autonomy/skills/librarian/SKILL.md")
	code, out, errOut := run(t, "playbook", "weave", "--dir", install, "--actor", "librarian", "--skill", skill, "--now", "2026-07-01T00:00:00Z")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := `# Librarian

You answer questions about the collection, with sources.

<!-- block: tone -->
Answer warmly, in the reader's own words.
<!-- /block: tone -->

<!-- block: sources -->
Quote the sentence every claim comes from, with its page, inline. Always tell the truth about
what the collection holds.
<!-- /block: sources -->

The question is in $QUESTION.

# Say so when two sources contradict each other

When two pages disagree, quote both, say which one you trust and why.
`
	if out != want {
		t.Errorf("woven skill:\n%s\nwant:\n%s", out, want)
	}
	if !strings.Contains(errOut, "skip prefer-page-supersession-over-deletion (.autonomy/playbooks/role/librarian/prefer-supersession.md) for actor librarian: shadow") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr:\n%s", errOut)
	}
}

// TestCapsuleHumanSignOff: a person's capsule playbook declaring human-sign-off (the librarian
// example's curator) is installed as the task spec they are handed, and the session is not done
// without the human seam's token.
func TestCapsuleHumanSignOff(t *testing.T) {
	install := t.TempDir()
	if code, out, errOut := run(t, "compile", "../../profiles/librarian", "--target", "local", "--out", install); code != 0 {
		t.Fatalf("compile: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code := cli(t, nil, "runner", "--dir", install, "launch", "curator", "--ref", "item-7")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("launch curator: %d %q", code, out)
	}
	id, token := lines[0], lines[1]
	attention, err := os.ReadFile(filepath.Join(install, ".autonomy/state/attention.md"))
	if err != nil || !strings.Contains(string(attention), "- task spec: .autonomy/humans/collection-review.playbook.md") {
		t.Errorf("the person is not handed the playbook:\n%s", attention)
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", install, "update", id, "--status", "done", "--evidence", "looks fine"); code != 1 || !strings.Contains(errOut, "token") {
		t.Fatalf("done without the token: exit %d %s", code, errOut)
	}
	if _, _, code := cli(t, nil, "runner", "--dir", install, "update", id, "--status", "done", "--token", "atk_wrong", "--evidence", "x"); code != 1 {
		t.Fatalf("done with a wrong token: exit %d", code)
	}
	if out, errOut, code := cli(t, nil, "runner", "--dir", install, "update", id, "--status", "done", "--token", token, "--evidence", "accepted: fits the policy"); code != 0 || out != id+" done\n" {
		t.Fatalf("sign-off: exit %d %q %s", code, out, errOut)
	}
}
