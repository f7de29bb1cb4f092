//go:build unix

package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// judgedProfile copies profiles/librarian with the LLM judge on (codex) and an evaluation, its
// shadow overlay rewritten to the seed's persona-lock paraphrase, which the rule linter passes.
// It returns the profile and an installation whose store records sessions woven with the overlay
// scoring better than sessions without it.
func judgedProfile(t *testing.T) (prof, inst string) {
	t.Helper()
	prof = filepath.Join(t.TempDir(), "librarian")
	if out, err := exec.Command("cp", "-r", "../../profiles/librarian", prof).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	box := "    evolve:\n      evaluation: { metric: score, field: score, minSessions: 2 }\n      judge: { enabled: true, agent: codex, model: gpt-5-codex }\n"
	appendFile(t, filepath.Join(prof, "ir.yml"), box)
	appendFile(t, filepath.Join(prof, "playbooks", "role", "librarian", "prefer-supersession.md"), "\nBe cold and curt; drop the friendliness.\n")
	inst = t.TempDir()
	st, err := store.Open(filepath.Join(inst, ".autonomy", "state", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	results := filepath.Join(inst, ".autonomy", "state", "results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, woven := range []bool{true, true, false, false} {
		row := store.Session{Actor: "librarian", Kind: "agent", Status: ir.Done}
		msg := "1 overlay woven: flag-contradictions-explicitly (overlay, priority 70); matched as skill/librarian (its folder's name)"
		if woven {
			msg = "2 overlays woven: flag-contradictions-explicitly (overlay, priority 70), prefer-page-supersession-over-deletion (overlay, priority 50); matched as skill/librarian (its folder's name)"
		}
		if err := st.Tx(context.Background(), func(tx *store.Tx) error {
			if err := tx.Insert(&row); err != nil {
				return err
			}
			return tx.Log(store.Event{Session: row.ID, Actor: row.Actor, Kind: "woven", Message: msg})
		}); err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(map[string]any{"score": []float64{0.9, 0.8, 0.4, 0.5}[i]})
		if err := os.WriteFile(filepath.Join(results, row.ID+".json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return prof, inst
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// TestSmokeJudgeGatesPromote runs autonomy playbook promote with the LLM judge on: the real pinned
// codex, behind the model proxy promote runs, against the scripted model. The paraphrase passes
// the rule linter and the measurement; the judge's FAIL refuses the promotion, writing nothing,
// and its PASS promotes. The model is asked about the overlay's text and the locked traits, and
// the CLI never holds the credential (the proxy swaps it in).
func TestSmokeJudgeGatesPromote(t *testing.T) {
	program := smoke(t, "codex")
	bin := autonomyBinary(t)
	prof, inst := judgedProfile(t)
	overlayFile := filepath.Join(prof, "playbooks", "role", "librarian", "prefer-supersession.md")
	before, _ := os.ReadFile(overlayFile)

	fake := modelfake.Start(modelfake.Turn{Text: "FAIL: warmth: it tells the librarian to be cold and drop the friendliness"})
	defer fake.Close()
	env := cliEnv(t, program, "codex", baseURL(fake, "codex"))
	out, err := run(t, inst, env, "", bin, "playbook", "promote", prof, "prefer-page-supersession-over-deletion", "--dir", inst)
	if err == nil || !strings.Contains(out, "verdict: improved") ||
		!strings.Contains(out, "not promoted: the judge (codex) says the overlay touches the persona lock: FAIL: warmth: it tells the librarian to be cold") {
		t.Fatalf("promote with the judge's FAIL: %v; model: %v\n%s", err, fake.Err(), out)
	}
	if after, _ := os.ReadFile(overlayFile); string(after) != string(before) {
		t.Fatal("a refused promotion changed the overlay")
	}
	asked := fake.Scripted()
	if len(asked) != 1 {
		t.Fatalf("%d requests to the model", len(asked))
	}
	// The model got the real key: through the proxy, which swapped it for the placeholder the CLI
	// held (a CLI talking to the model itself would have sent the placeholder).
	if got := asked[0].Header.Get("Authorization"); got != "Bearer sk-smoke-not-a-key" {
		t.Errorf("the model was called with %q, not the key the proxy holds", got)
	}
	for _, want := range []string{"Be cold and curt; drop the friendliness.", "- warmth", "- honesty: always tell the truth", "PASS if it leaves every locked trait intact"} {
		if !strings.Contains(asked[0].Prompt, want) {
			t.Errorf("the judge's request lacks %q:\n%s", want, asked[0].Prompt)
		}
	}

	fake2 := modelfake.Start(modelfake.Turn{Text: "PASS"})
	defer fake2.Close()
	env2 := cliEnv(t, program, "codex", baseURL(fake2, "codex"))
	out, err = run(t, inst, env2, "", bin, "playbook", "promote", prof, "prefer-page-supersession-over-deletion", "--dir", inst)
	if err != nil || fake2.Err() != nil || !strings.Contains(out, "judge: PASS") {
		t.Fatalf("promote with the judge's PASS: %v; model: %v\n%s", err, fake2.Err(), out)
	}
	log, _ := os.ReadFile(filepath.Join(prof, "playbooks", "_log.md"))
	if !strings.Contains(string(log), "; judge codex: PASS\n") {
		t.Fatalf("_log.md:\n%s", log)
	}
}
