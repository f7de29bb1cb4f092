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

// TestEvolveLoopWithTheRunner runs the loop as docs/playbooks.md tells it, with the local runner
// and real sessions: the profile compiled into a production and a trial installation, the shadow
// overlay put on trial in the latter, sessions launched in both (a stand-in agent scoring 0.9
// when its woven skill holds the overlay's text, else 0.5, in a result that satisfies the default
// contract), and promote measuring both: the
// overlay is promoted in the profile.
func TestEvolveLoopWithTheRunner(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sessions under the local runner")
	}
	const slug = "prefer-page-supersession-over-deletion"
	ws := t.TempDir()
	prof := evolveProfile(t, "    evolve:\n      evaluation: { metric: score, field: score, minSessions: 2, minImprovement: 0.1 }\n")
	prod, trial := filepath.Join(ws, "prod"), filepath.Join(ws, "trial")
	for _, dir := range []string{prod, trial} {
		if code, _, errOut := run(t, "compile", prof, "--target", "local", "--out", dir); code != 0 {
			t.Fatalf("compile: exit %d\n%s", code, errOut)
		}
	}
	if code, out, errOut := run(t, "playbook", "trial", slug, "--dir", trial); code != 0 || !strings.Contains(out, "shadow → active in this installation only") {
		t.Fatalf("trial: exit %d\n%s%s", code, out, errOut)
	}
	agentCmd, _ := json.Marshal([]string{"sh", "-c", `skill=$(cat); case "$skill" in *"link the page that supersedes it"*) s=0.9;; *) s=0.5;; esac; printf '{"status": "done", "summary": "answered", "score": %s}' "$s" > "$AUTONOMY_RESULT"`})
	t.Setenv("AUTONOMY_LOCAL_AGENT", string(agentCmd))
	t.Setenv("AUTONOMY_DIR", "")
	for _, dir := range []string{prod, trial} {
		for i := 0; i < 2; i++ {
			if code, _, errOut := run(t, "runner", "--dir", dir, "launch", "librarian", "--text", "which page?"); code != 0 {
				t.Fatalf("launch: exit %d\n%s", code, errOut)
			}
		}
	}
	for _, dir := range []string{prod, trial} {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			_, out, _ := run(t, "runner", "--dir", dir, "list", "--all", "--format", "json")
			if strings.Count(out, `"status": "done"`) == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the sessions of %s did not end:\n%s", dir, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	code, out, errOut := run(t, "playbook", "promote", prof, slug, "--dir", prod, "--dir", trial)
	if code != 0 || !strings.Contains(out, "candidate (woven with "+slug+"): 2 sessions, mean 0.9") || !strings.Contains(out, "baseline (woven without it): 2 sessions, mean 0.5") {
		t.Fatalf("promote: exit %d\n%s%s", code, out, errOut)
	}
	data, _ := os.ReadFile(filepath.Join(prof, "playbooks", "role", "librarian", "prefer-supersession.md"))
	if !strings.Contains(string(data), "\nstatus: active\n") {
		t.Fatalf("not promoted in the profile:\n%s", data)
	}
}
