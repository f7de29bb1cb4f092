package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/internal/testfs"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// evolveProfile is a copy of profiles/librarian with box appended to its policy.box.
func evolveProfile(t *testing.T, box string) string {
	t.Helper()
	return testfs.ProfileWith(t, "../../profiles/librarian", box)
}

// recordSessions records ended sessions of the librarian in the local runner's store of the
// installation dir, as the runner does: a "woven" event each, naming slug among the overlays
// woven when woven[i], and a result with score scores[i].
func recordSessions(t *testing.T, dir, slug string, woven []bool, scores []float64, extra map[string]any) []string {
	t.Helper()
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	results := filepath.Join(dir, filepath.FromSlash(local.StateDir), "results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, w := range woven {
		row := store.Session{Actor: "librarian", Kind: "agent", Status: ir.Done}
		ws := []playproto.Woven{{Slug: "flag-contradictions-explicitly", Kind: "overlay", Priority: 70}}
		if w {
			ws = append(ws, playproto.Woven{Slug: slug, Kind: "overlay", Priority: 50})
		}
		err := st.Tx(context.Background(), func(tx *store.Tx) error {
			if err := tx.Insert(&row); err != nil {
				return err
			}
			return tx.Log(store.Event{Session: row.ID, Actor: row.Actor, Kind: "woven", Message: local.WovenSummary(ws) + "; matched as skill/librarian (its folder's name)"})
		})
		if err != nil {
			t.Fatal(err)
		}
		res := map[string]any{"score": scores[i]}
		for k, v := range extra {
			res[k] = v
		}
		data, _ := json.Marshal(res)
		if err := os.WriteFile(filepath.Join(results, row.ID+".json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, row.ID)
	}
	return ids
}

func TestPlaybookReflectCommand(t *testing.T) {
	evolveDelta := readEvolveDelta(t)
	prof := evolveProfile(t, "")
	delta := filepath.Join(t.TempDir(), "delta.md")
	if err := os.WriteFile(delta, []byte(evolveDelta), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "playbook", "reflect", prof, "--delta", delta, "--now", "2026-07-01T12:00:00Z")
	if code != 0 || !strings.Contains(out, "write playbooks/role/librarian/cite-page-dates.md\n") || !strings.Contains(out, "write playbooks/_index.md\n") ||
		!strings.Contains(errOut, "autonomy playbook promote "+prof+" cite-page-dates") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, "playbook", "validate", filepath.Join(prof, "playbooks")); code != 0 || out != "" {
		t.Fatalf("the package after reflect: exit %d\n%s%s", code, out, errOut)
	}
	// Again: the slug is taken now.
	code, _, errOut = run(t, "playbook", "reflect", prof, "--delta", delta)
	if code != 1 || !strings.Contains(errOut, delta+`:3:7: slug "cite-page-dates" is already the overlay playbooks/role/librarian/cite-page-dates.md`) {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	lock := filepath.Join(t.TempDir(), "cold.md")
	if err := os.WriteFile(lock, []byte(strings.Replace(strings.Replace(evolveDelta, "cite-page-dates", "colder", 1),
		"Give the date of its last revision next to the quote.", "Answer curtly: warmth is unnecessary here.", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = run(t, "playbook", "reflect", prof, "--delta", lock)
	if code != 1 || !strings.Contains(errOut, lock+`:13:1: the overlay touches a locked persona trait: modifies-locked-trait: trait "warmth"`) ||
		!strings.Contains(errOut, "the delta touches the persona lock: discarded, nothing written") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{prof}, "give the delta: --delta FILE, or --session ID"},
		{[]string{prof, "--delta", delta, "--session", "1-abcd"}, "give the delta: --delta FILE, or --session ID"},
		{[]string{prof, "--delta", filepath.Join(t.TempDir(), "missing.md")}, "missing.md: no such file or directory"},
		{[]string{prof, "--delta", delta, "--now", "yesterday"}, `--now "yesterday"`},
	} {
		if code, _, errOut := run(t, append([]string{"playbook", "reflect"}, c.args...)...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d\n%s", c.args, code, errOut)
		}
	}
}

func TestPlaybookReflectFromASession(t *testing.T) {
	evolveDelta := readEvolveDelta(t)
	prof := evolveProfile(t, "")
	inst := t.TempDir()
	ids := recordSessions(t, inst, "x", []bool{false, false}, []float64{1, 1}, map[string]any{"overlay": evolveDelta})
	code, out, errOut := run(t, "playbook", "reflect", prof, "--session", ids[0], "--dir", inst)
	if code != 0 || !strings.Contains(out, "from run "+ids[0]) {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	data, _ := os.ReadFile(filepath.Join(prof, "playbooks", "role", "librarian", "cite-page-dates.md"))
	if !strings.Contains(string(data), "{kind: run, ref: "+ids[0]+", note: proposed by session "+ids[0]+" of librarian}") {
		t.Fatalf("no provenance:\n%s", data)
	}
	// A result without a delta, a session that is not done, a session that does not exist.
	bare := recordSessions(t, inst, "x", []bool{false}, []float64{1}, nil)[0]
	st, _ := store.Open(local.DBPath(inst))
	var failed store.Session
	_ = st.Tx(context.Background(), func(tx *store.Tx) error {
		failed = store.Session{Actor: "librarian", Kind: "agent", Status: ir.Failed}
		return tx.Insert(&failed)
	})
	st.Close()
	for id, want := range map[string]string{
		bare:      `has no "overlay" string: a reflecting session ends with a result whose overlay field holds its delta`,
		failed.ID: "session " + failed.ID + " is failed: only a session that ended done (its result verified) proposes a delta",
		"99-zzzz": `holds no session "99-zzzz"`,
	} {
		if code, _, errOut := run(t, "playbook", "reflect", prof, "--session", id, "--dir", inst); code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d\n%s", id, code, errOut)
		}
	}
}

func TestPlaybookPromoteCommand(t *testing.T) {
	const slug = "prefer-page-supersession-over-deletion"
	prof := evolveProfile(t, "")
	inst := t.TempDir()
	recordSessions(t, inst, slug, []bool{true, true, false, false}, []float64{0.9, 0.8, 0.5, 0.6}, nil)
	code, _, errOut := run(t, "playbook", "promote", prof, slug, "--dir", inst)
	if code != 1 || !strings.Contains(errOut, "declares no evaluation") {
		t.Fatalf("no evaluation: exit %d\n%s", code, errOut)
	}
	prof = evolveProfile(t, "    evolve:\n      evaluation: { metric: score, field: score, minSessions: 2, minImprovement: 0.2 }\n")
	if code, _, errOut := run(t, "playbook", "promote", prof, slug, "--dir", t.TempDir()); code != 1 || !strings.Contains(errOut, "no recorded session") {
		t.Fatalf("no store: exit %d\n%s", code, errOut)
	}
	code, out, errOut := run(t, "playbook", "promote", prof, slug, "--dir", inst, "--now", "2026-07-01T12:00:00Z")
	if code != 0 || !strings.Contains(out, "improvement: +0.3\n") || !strings.Contains(out, "verdict: improved\n") || !strings.Contains(out, "write playbooks/_log.md\n") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, "playbook", "promote", prof, slug, "--dir", inst); code != 1 || !strings.Contains(errOut, "is active: only a shadow overlay is promoted") {
		t.Fatalf("twice: exit %d\n%s", code, errOut)
	}
}

func TestPlaybookArchiveCommand(t *testing.T) {
	prof := evolveProfile(t, "")
	code, out, errOut := run(t, "playbook", "archive", prof)
	if code != 0 || !strings.Contains(out, "nothing to archive in playbooks") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, "playbook", "archive", prof, "nope"); code != 1 || !strings.Contains(errOut, `playbooks has no overlay "nope": nothing archived`) {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	code, out, errOut = run(t, "playbook", "archive", prof, "inline-citations")
	if code != 0 || !strings.Contains(out, "archive inline-citations (playbooks/skill/inline-citations.md): archived by hand (was active)") || !strings.Contains(errOut, "1 overlay archived") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestPlaybookTrialRefusals(t *testing.T) {
	const slug = "prefer-page-supersession-over-deletion"
	inst := t.TempDir()
	if code, _, errOut := run(t, "playbook", "trial", slug, "--dir", inst); code != 1 || !strings.Contains(errOut, "installs no overlay package") {
		t.Fatalf("no install: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := run(t, "compile", "../../profiles/librarian", "--target", "local", "--out", inst); code != 0 {
		t.Fatalf("compile: exit %d\n%s", code, errOut)
	}
	for args, want := range map[string]string{
		"nope":             `the installed package .autonomy/playbooks has no overlay "nope"`,
		"inline-citations": `overlay "inline-citations" is active in .autonomy/playbooks: a trial is for a shadow overlay`,
	} {
		if code, _, errOut := run(t, "playbook", "trial", args, "--dir", inst); code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d\n%s", args, code, errOut)
		}
	}
	if code, _, errOut := run(t, "playbook", "trial", slug, "--dir", inst); code != 0 {
		t.Fatalf("trial: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := run(t, "playbook", "trial", slug, "--dir", inst); code != 1 || !strings.Contains(errOut, "is active in .autonomy/playbooks") {
		t.Fatalf("twice: exit %d\n%s", code, errOut)
	}
}

// TestPlaybookPromoteJudgeNeedsItsCLIAndCredential: with the judge on, promote is refused, saying
// why, when the judge cannot run: no pinned CLI, or no credential for its model proxy.
func TestPlaybookPromoteJudgeNeedsItsCLIAndCredential(t *testing.T) {
	const slug = "prefer-page-supersession-over-deletion"
	prof := evolveProfile(t, "    evolve:\n      evaluation: { metric: score, field: score, minSessions: 2 }\n      judge: { enabled: true }\n")
	inst := t.TempDir()
	recordSessions(t, inst, slug, []bool{true, true, false, false}, []float64{0.9, 0.8, 0.5, 0.6}, nil)
	t.Setenv("OPENAI_API_KEY", "")
	code, _, errOut := run(t, "playbook", "promote", prof, slug, "--dir", inst)
	if code != 1 || !(strings.Contains(errOut, "not promoted: the judge runs codex against a model proxy holding the model's credential: set OPENAI_API_KEY") ||
		strings.Contains(errOut, "not promoted: the judge needs the pinned codex (@openai/codex@")) {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	data, _ := os.ReadFile(filepath.Join(prof, "playbooks", "role", "librarian", "prefer-supersession.md"))
	if !strings.Contains(string(data), "status: shadow") {
		t.Fatal("promoted without its judge")
	}
}

// readEvolveDelta is a reflection's delta for the librarian: a new shadow overlay (the playbook
// package's fixture, which its tests reflect too).
func readEvolveDelta(t *testing.T) string {
	t.Helper()
	return testfs.ReadString(t, "../../playbook/testdata/evolve-delta.md")
}
