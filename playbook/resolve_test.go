package playbook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
)

// The weave config a substrate writes from the resolved model is the bytes WeaveConfig marshals
// to, which the runtime reads back (WeaveInstall).
func TestResolveWeaveConfig(t *testing.T) {
	p, diags, err := ir.Check(filepath.Join("..", "profiles", "librarian"))
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v %s", err, diags)
	}
	r, diags := Resolve(p)
	if diags.HasErrors() || r.Overlays == nil {
		t.Fatalf("overlays %v: %s", r.Overlays, diags)
	}
	persona, _ := ReadPersona(p)
	for _, pkg := range []string{".autonomy/playbooks", `odd "dir"/<x>`} {
		got, err := r.Overlays.WeaveConfig(pkg)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.MarshalIndent(WeaveConfig{Package: pkg, Persona: persona}, "", "  ")
		if string(got) != string(want)+"\n" {
			t.Errorf("%s: got\n%s\nwant\n%s", pkg, got, want)
		}
		var back WeaveConfig
		if err := json.Unmarshal(got, &back); err != nil || back.Package != pkg || back.Cap != persona.Cap {
			t.Errorf("%s: read back %+v, %v", pkg, back, err)
		}
	}
}

// An overlay targets an actor by its role or its skill's name on every substrate, and by the
// runtime only on the substrates its runtime/ pattern matches; a step playbook or a script is
// never woven into.
func TestResolveWeaves(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"ir.yml": "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n" +
			"  writer: { behavior: skills/writer, triggers: [{ dispatch: true }] }\n" +
			"  editor: { behavior: skills/editor, triggers: [{ dispatch: true }] }\n" +
			"  other: { behavior: skills/other, triggers: [{ dispatch: true }] }\n",
		"skills/writer/SKILL.md": "# Writer\n",
		"skills/editor/SKILL.md": "---\nname: copyedit\n---\n# Editor\n",
		"skills/other/SKILL.md":  "# Other\n",
		"playbooks/role.md":      overlayFile("by-role", "{ kind: role, ref: role/writer }"),
		"playbooks/skill.md":     overlayFile("by-skill", "{ kind: skill, ref: skill/copy* }"),
		"playbooks/runtime.md":   overlayFile("by-runtime", "{ kind: runtime, ref: runtime/loc* }"),
	}
	for name, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v %s", err, diags)
	}
	r, _ := Resolve(p)
	if r.Overlays == nil {
		t.Fatal("no overlay package resolved")
	}
	want := map[string]map[string]bool{
		"writer": {"local": true, "gh-actions": true},  // role/writer
		"editor": {"local": true, "gh-actions": true},  // skill/copyedit, the declared name
		"other":  {"local": true, "gh-actions": false}, // runtime/loc* only
	}
	for _, a := range p.Actors {
		for sub, w := range want[a.Name.Value] {
			if got := r.Weaves(a, sub); got != w {
				t.Errorf("Weaves(%s, %s) = %v, want %v", a.Name.Value, sub, got, w)
			}
		}
		if k := r.Behavior(a).Kind; k != resolved.Skill {
			t.Errorf("%s: kind %q", a.Name.Value, k)
		}
	}
}

func overlayFile(slug, target string) string {
	return "---\nschema: playbooks/v1\nslug: " + slug + "\ntitle: T.\ntargets:\n  - " + target +
		"\nkind: overlay\npriority: 50\nupdated_at: 2026-01-01\nevidence:\n  - { kind: work-item, ref: \"#1\", note: n }\nstatus: active\n---\n\nBe brief.\n"
}

// A workflow step's schema and postcondition reach the spec a compiled job runs the step from.
func TestResolveStepChecks(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ir.yml"), []byte("schema: autonomy.ir.v1\ntargets: [gh-actions]\nactors:\n  w:\n    behavior: flows/w.yml\n    triggers: [{ dispatch: true }]\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "flows"), 0o755)
	os.WriteFile(filepath.Join(dir, "flows/w.yml"), []byte("name: w\nsteps:\n  - id: a\n    command: cli echo '{}'\n    schema: { type: object, required: [n] }\n    postcondition: cli test -d 'a dir'\n"), 0o644)
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v %s", err, diags)
	}
	r, diags := Resolve(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	spec := r.Behaviors["flows/w.yml"].Workflow.Steps[0].Spec
	if string(spec.Schema) != `{"required":["n"],"type":"object"}` || spec.Postcondition == nil ||
		spec.Postcondition.Namespace != "cli" || len(spec.Postcondition.Argv) != 3 || spec.Postcondition.Argv[2] != "a dir" {
		t.Fatalf("spec %+v %+v", spec, spec.Postcondition)
	}
}
