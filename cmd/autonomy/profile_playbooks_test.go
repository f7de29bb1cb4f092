package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// playbookProfile writes a profile whose actors' behaviors are a capsule, a workflow and a step
// playbook, with an overlay package in playbooks/ (indexed), and returns its directory.
func playbookProfile(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := "../../playbook"
	files := map[string]string{
		"playbooks/release.playbook.md":                 src + "/capsule/testdata/good/release.playbook.md",
		"playbooks/role/release/flag-contradictions.md": src + "/overlay/testdata/good/flag-contradictions.md",
		"playbooks/calmer-tone.md":                      src + "/overlay/testdata/good/tone-block.md",
		"flows/triage.yml":                              src + "/workflow/testdata/good/inbox-triage.yml",
		"flows/review.md":                               src + "/steps/testdata/good/debt-assessment.md",
	}
	for dst, from := range files {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(dst, "flag-contradictions.md") {
			data = []byte(strings.Replace(string(data), "supersedes: [mention-contradictions]\n", "", 1))
		}
		write(t, filepath.Join(dir, dst), string(data))
	}
	write(t, filepath.Join(dir, "skills/helper/SKILL.md"), "# Helper\n\nHelp.\n")
	write(t, filepath.Join(dir, "ir.yml"), `schema: autonomy.ir.v1
targets: [gh-actions, local]
codeHost: github
actors:
  release:
    behavior: playbooks/release.playbook.md
    capabilities: [tasks:converse]
    triggers: [{ dispatch: true }]
  triage:
    behavior: flows/triage.yml
    capabilities: [tasks:converse]
    triggers: [{ dispatch: true }]
  review:
    behavior: flows/review.md
    capabilities: [tasks:converse]
    triggers: [{ dispatch: true, params: { ITEM: subject.ref } }]
  helper:
    behavior: skills/helper
    capabilities: [tasks:converse]
    triggers: [{ dispatch: true }]
`)
	if code, out, errOut := run(t, "playbook", "index", filepath.Join(dir, "playbooks")); code != 0 {
		t.Fatalf("index: exit %d\n%s%s", code, out, errOut)
	}
	return dir
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestProfilePlaybooksValidate: validate checks the playbooks a profile uses, each problem at its
// own file and line.
func TestProfilePlaybooksValidate(t *testing.T) {
	dir := playbookProfile(t)
	code, out, errOut := run(t, "validate", dir)
	// Both targets run a step playbook step by step: only the capsule playbook is warned about.
	if code != 0 || strings.Count(out, "\n") != 1 || strings.Contains(out, "flows/review.md") {
		t.Fatalf("a good playbook profile: exit %d\n%s%s", code, out, errOut)
	}
	// Break one playbook of each kind.
	edit(t, filepath.Join(dir, "flows/triage.yml"), "stdin: $collect.stdout", "stdin: $later.stdout")
	edit(t, filepath.Join(dir, "flows/review.md"), "## STEP 1: Inventory", "## STEP 7: Inventory")
	edit(t, filepath.Join(dir, "playbooks/release.playbook.md"), "method: human-sign-off", "method: vibes")
	edit(t, filepath.Join(dir, "playbooks/calmer-tone.md"), "kind: block-replacement", "kind: prepend")
	code, out, _ = run(t, "validate", dir)
	for _, want := range []string{
		filepath.Join(dir, "flows/triage.yml") + `:16:12: step "categorize": $later.stdout names no step "later"`,
		filepath.Join(dir, "flows/review.md") + ":18:1: warning: step numbers are not sequential: STEP 7 follows the start",
		filepath.Join(dir, "playbooks/release.playbook.md") + `:48:9: check 10 (§Verification declares one of the 6 methods): method "vibes" is not one of the 6 methods`,
		filepath.Join(dir, "playbooks/calmer-tone.md") + `:6:7: unknown kind "prepend"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	// compile refuses too, and writes nothing.
	outDir := t.TempDir()
	if code, _, _ := run(t, "compile", dir, "--target", "local", "--out", outDir); code != 1 {
		t.Errorf("compile with broken playbooks: exit %d", code)
	}
	if entries, _ := os.ReadDir(outDir); len(entries) != 0 {
		t.Errorf("compile wrote %d entries", len(entries))
	}
}

func TestProfileOverlayBehaviorRefused(t *testing.T) {
	dir := playbookProfile(t)
	edit(t, filepath.Join(dir, "ir.yml"), "behavior: skills/helper", "behavior: playbooks/calmer-tone.md")
	code, out, _ := run(t, "validate", dir)
	if code != 1 || !strings.Contains(out, `ir.yml:18:15: actor "helper": behavior playbooks/calmer-tone.md is an overlay`) {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func edit(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s has no %q", path, old)
	}
	write(t, path, strings.Replace(string(data), old, new, 1))
}

// TestProfilePlaybooksCompile: compile installs the playbook behaviors and the overlay package
// verbatim on both targets; check then passes; a stale profile index is drift for check and a
// warning for validate.
func TestProfilePlaybooksCompile(t *testing.T) {
	dir := playbookProfile(t)
	// The installation's files on disk: the targets the profile declares (kubernetes carries
	// them in a ConfigMap, proven in its own package).
	for _, target := range declaredTargets(t, dir) {
		t.Run(target, func(t *testing.T) {
			out := t.TempDir()
			if code, stdout, errOut := run(t, "compile", dir, "--target", target, "--out", out); code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, errOut)
			}
			for _, rel := range []string{"playbooks/release.playbook.md", "playbooks/role/release/flag-contradictions.md", "playbooks/calmer-tone.md", "playbooks/_index.md", "flows/triage.yml", "flows/review.md"} {
				want, _ := os.ReadFile(filepath.Join(dir, rel))
				got, err := os.ReadFile(filepath.Join(out, ".autonomy", rel))
				if err != nil || string(got) != string(want) {
					t.Errorf("%s not installed verbatim (err %v)", rel, err)
				}
			}
			if code, stdout, errOut := run(t, "check", dir, "--target", target, "--dir", out); code != 0 {
				t.Fatalf("check after compile: exit %d\n%s%s", code, stdout, errOut)
			}
		})
	}
	// An overlay changes and the index is not regenerated.
	edit(t, filepath.Join(dir, "playbooks/calmer-tone.md"), "status: shadow", "status: active")
	code, out, _ := run(t, "validate", dir)
	if code != 0 || !strings.Contains(out, "_index.md:5:1: warning: _index.md is out of date") {
		t.Fatalf("validate with a stale index: exit %d\n%s", code, out)
	}
	install := t.TempDir()
	if code, stdout, errOut := run(t, "compile", dir, "--target", "local", "--out", install); code != 0 {
		t.Fatalf("compile with a stale index: exit %d\n%s%s", code, stdout, errOut)
	}
	// The install holds the index as generated, not the stale copy.
	if got, _ := os.ReadFile(filepath.Join(install, ".autonomy/playbooks/_index.md")); !strings.Contains(string(got), "| calmer-tone | Slow down with crisis-flagged users. | skill/support | active |") {
		t.Errorf("installed index:\n%s", got)
	}
	code, stdout, _ := run(t, "check", dir, "--target", "local", "--dir", install)
	if code != 1 || !strings.Contains(stdout, "playbooks/_index.md: changed: the profile's overlay index is stale; run autonomy playbook index") ||
		!strings.Contains(stdout, "+2 active, 1 shadow, 0 archived.") && !strings.Contains(stdout, "+2 active, 0 shadow, 0 archived.") {
		t.Fatalf("check with a stale index: exit %d\n%s", code, stdout)
	}
	if code, _, _ := run(t, "playbook", "index", filepath.Join(dir, "playbooks")); code != 0 {
		t.Fatal("index")
	}
	if code, stdout, errOut := run(t, "check", dir, "--target", "local", "--dir", install); code != 0 {
		t.Fatalf("check after index: exit %d\n%s%s", code, stdout, errOut)
	}
}

// TestProfileCapsuleVerification: a capsule behavior's verification method is checked against
// the actor: cold-boot-test and external-audit are refused, peer-review needs a reviewer and
// automated-check a result contract.
func TestProfileCapsuleVerification(t *testing.T) {
	for _, c := range []struct{ method, want string }{
		{"cold-boot-test", "refused: it needs three independent cold-boot agents"},
		{"external-audit", "refused: it needs a third party's validation"},
		{"peer-review", "the session is done only after a reviewer approves, and the actor names none (add review: REVIEWER"},
		{"automated-check", "the session is done only with a result that passes a contract, and the actor declares none"},
	} {
		dir := playbookProfile(t)
		edit(t, filepath.Join(dir, "playbooks/release.playbook.md"), "method: human-sign-off", "method: "+c.method)
		code, out, _ := run(t, "validate", dir)
		want := filepath.Join(dir, "ir.yml") + `:6:15: actor "release": playbooks/release.playbook.md declares verification ` + c.method
		if code != 1 || !strings.Contains(out, want) || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d\n%s", c.method, code, out)
		}
	}
	dir := playbookProfile(t)
	edit(t, filepath.Join(dir, "playbooks/release.playbook.md"), "method: human-sign-off", "method: self-attestation")
	if code, out, _ := run(t, "validate", dir); code != 0 || strings.Contains(out, "verification") {
		t.Errorf("self-attestation: exit %d\n%s", code, out)
	}
}
