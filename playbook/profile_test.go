package playbook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// profileWith writes ir.yml (with the policy.box given) and a skill, and loads the profile.
func profileWith(t *testing.T, box string) *ir.Profile {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "skills", "x"), 0o755)
	os.WriteFile(filepath.Join(dir, "skills", "x", "SKILL.md"), []byte("# X\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "notes"), 0o755)
	yml := "schema: autonomy.ir.v1\ntargets: [fake]\nactors:\n  x:\n    behavior: skills/x\n    triggers: [{ dispatch: true }]\npolicy:\n  box:\n" + box
	os.WriteFile(filepath.Join(dir, "ir.yml"), []byte(yml), 0o644)
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v %s", err, diags)
	}
	return p
}

func TestProfilePolicyErrors(t *testing.T) {
	for _, c := range []struct{ box, want string }{
		{"    overlays: ../elsewhere\n", `ir.yml:9:15: policy.box.overlays leads out of the profile directory`},
		{"    overlays: missing\n", `ir.yml:9:15: policy.box.overlays names no folder: missing does not exist`},
		{"    overlays: [a]\n", `ir.yml:9:15: policy.box.overlays must be a folder of the profile`},
		{"    persona: { locked: [{ id: Warmth }] }\n", `ir.yml:9:31: policy.box.persona.locked: trait id "Warmth" is not kebab-case`},
		{"    persona: { locked: [{ blocks: [tone] }] }\n", `ir.yml:9:25: policy.box.persona.locked: a trait has no id`},
		{"    persona: { maxOverlay: 3 }\n", `ir.yml:9:16: policy.box.persona: unknown key "maxOverlay" (did you mean "maxOverlays"?)`},
		{"    persona: { maxOverlays: 0 }\n", `ir.yml:9:29: policy.box.persona.maxOverlays must be a positive integer, not "0"`},
		{"    persona: { locked: warmth }\n", `ir.yml:9:24: policy.box.persona.locked must be a list of traits`},
	} {
		p := profileWith(t, c.box)
		_, diags := Profile(p)
		if !strings.Contains(diags.String(), c.want) || !diags.HasErrors() {
			t.Errorf("%q: got\n%s\nwant %s", c.box, diags, c.want)
		}
	}
	p := profileWith(t, "    overlays: notes\n    persona: { locked: [{ id: warmth, blocks: [tone], phrases: [answer warmly] }], maxOverlays: 3 }\n")
	if _, diags := Profile(p); len(diags) != 0 {
		t.Errorf("a good policy draws:\n%s", diags)
	}
	persona, _ := ReadPersona(p)
	if persona.Cap != 3 || len(persona.Locked) != 1 || persona.Locked[0].Phrases[0] != "answer warmly" {
		t.Errorf("%+v", persona)
	}
	if persona, _ := ReadPersona(profileWith(t, "    local: {}\n")); persona.Cap != DefaultCap {
		t.Errorf("default cap %d", persona.Cap)
	}
}
