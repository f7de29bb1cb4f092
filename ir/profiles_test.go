package ir

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func exampleProfiles(t testing.TB) []string {
	dirs, err := filepath.Glob("../profiles/*/ir.yml")
	if err != nil || len(dirs) < 3 {
		t.Fatalf("example profiles: %v, %v", dirs, err)
	}
	for i := range dirs {
		dirs[i] = filepath.Dir(dirs[i])
	}
	return dirs
}

// TestExampleProfilesAreValid: every profile users copy from validates with no problem at all.
func TestExampleProfilesAreValid(t *testing.T) {
	for _, dir := range exampleProfiles(t) {
		p, diags, err := Check(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(diags) != 0 {
			t.Errorf("%s:\n%s", dir, diags)
			continue
		}
		for _, a := range p.Actors {
			if a.BehaviorFile == "" {
				t.Errorf("%s: actor %s: behavior not resolved", dir, a.Name.Value)
			}
		}
	}
}

// TestSDLCShowsTheStandard pins the features the sdlc example exists to demonstrate.
func TestSDLCShowsTheStandard(t *testing.T) {
	p, _, err := Check("../profiles/sdlc")
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]bool{}
	for _, tr := range p.Actor("reviewer").Triggers {
		for _, prm := range tr.Params {
			sources[prm.Source.Value] = true
		}
	}
	if len(sources) != len(Sources) {
		t.Errorf("reviewer forwards %d sources, want all %d", len(sources), len(Sources))
	}
	if d := p.Actor("develop"); d.Review.Value != "reviewer" || d.Execution == nil || d.Execution.Workspace.Value != "isolated" {
		t.Errorf("develop must have review: reviewer and an isolated workspace")
	}
	if !p.Actor("maintainer").IsHuman() {
		t.Errorf("maintainer must be kind: human")
	}
	if s := p.Actor("strategist").Capabilities; len(s) == 0 || s[0].Name != "code:propose" || s[0].Scope != "roadmap" {
		t.Errorf("strategist capabilities = %+v, want code:propose@roadmap", s)
	}
	if len(p.Policy.TaskStates) != len(States) {
		t.Errorf("taskStates maps %d states, want all %d", len(p.Policy.TaskStates), len(States))
	}
}

func TestCatalogSizes(t *testing.T) {
	if len(Capabilities) != 9 || len(Sources) != 5 || len(States) != 8 {
		t.Fatalf("catalogs: %d capabilities, %d sources, %d states; the standard has 9, 5, 8", len(Capabilities), len(Sources), len(States))
	}
	for _, e := range Capabilities {
		if e.Description == "" || e.Noun == "" {
			t.Errorf("capability %s lacks a description or noun", e.Name)
		}
	}
	if c, _ := LookupCapability("code:merge"); c.Grantable {
		t.Errorf("code:merge must never be grantable")
	}
}

// TestJSONSchema: the editor schema is a valid draft-07 schema, accepts every example profile,
// rejects obvious mistakes, and matches the committed docs/ir.schema.json.
func TestJSONSchema(t *testing.T) {
	raw := JSONSchema()
	committed, err := os.ReadFile("../docs/ir.schema.json")
	if err != nil || !bytes.Equal(committed, raw) {
		t.Errorf("docs/ir.schema.json is stale or missing (run make schema): %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(SchemaID)
	if err != nil {
		t.Fatalf("the schema does not compile: %v", err)
	}
	reference, _ := filepath.Glob("testdata/reference/*")
	if len(reference) < 2 {
		t.Fatalf("reference-style profiles: %v", reference)
	}
	for _, dir := range append(exampleProfiles(t), reference...) {
		if err := sch.Validate(profileJSON(t, filepath.Join(dir, ProfileFile))); err != nil {
			t.Errorf("%s: schema rejects a valid profile: %v", dir, err)
		}
	}
	bad := map[string]string{
		"code:merge":      "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  a: { behavior: x, capabilities: [code:merge], triggers: [{ dispatch: true }] }\n",
		"unknown source":  "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  a: { behavior: x, triggers: [{ dispatch: true, params: { X: subject.nope } }] }\n",
		"human on cron":   "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  a: { kind: human, behavior: x, triggers: [{ cron: \"* * * * *\" }] }\n",
		"two forms":       "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  a: { behavior: x, triggers: [{ dispatch: true, cron: \"* * * * *\" }] }\n",
		"actors + agents": "schema: autonomy.ir.v1\ntargets: [local]\nactors: { a: { behavior: x, triggers: [{ dispatch: true }] } }\nagents: { b: { behavior: x, triggers: [{ dispatch: true }] } }\n",
		"unknown key":     "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  a: { behavior: x, triggers: [{ dispatch: true }], timout: 3 }\n",
	}
	for name, src := range bad {
		file := filepath.Join(t.TempDir(), "ir.yml")
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(profileJSON(t, file)); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
	}
}

// profileJSON converts a profile file to the JSON values an editor validates against the schema.
func profileJSON(t *testing.T, file string) any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r := &reporter{file: file}
	root := parseYAML(r, data)
	if root == nil {
		t.Fatalf("%s: %s", file, r.diags)
	}
	normalize(r, root)
	return toJSONValue(root)
}
