package ir

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The profiles ir's tests read declare the targets this build registers (substrates/registry
// registers them from the substrates; ir knows none by name): the same declarations here.
func init() {
	RegisterTarget(Target{Name: "gh-actions", Aliases: []string{"github"}})
	RegisterTarget(Target{Name: "local"})
	RegisterTarget(Target{Name: "kubernetes", Short: []string{"k8s"}})
}

// withTarget registers t for the duration of the test.
func withTarget(t *testing.T, target Target) {
	t.Helper()
	t.Cleanup(RegisterTarget(target))
}

// TestRegisteredTarget: a target registered by a substrate is one profiles may declare (its alias
// with a warning), its policy.box section is type-checked and, like its alias's, not reported as
// unread, and the JSON Schema carries its name, alias and box section; unregistered, it is unknown.
func TestRegisteredTarget(t *testing.T) {
	box := map[string]any{"type": []string{"object", "null"}, "properties": map[string]any{"zone": map[string]any{"type": "string"}}}
	withTarget(t, Target{Name: "fake", Aliases: []string{"phony"}, Short: []string{"short"}, Box: box})
	profile := func(target, boxYAML string) string {
		return "schema: autonomy.ir.v1\ntargets: [" + target + "]\nactors:\n  hello:\n    behavior: skills/hello\n    triggers: [{ dispatch: true }]\npolicy:\n  box:\n" + boxYAML
	}
	check := func(src string) Diagnostics {
		t.Helper()
		dir := writeProfile(t, map[string]string{"ir.yml": src, "skills/hello/SKILL.md": "# hello\n"})
		_, diags, err := Check(dir)
		if err != nil {
			t.Fatal(err)
		}
		return diags
	}
	if d := check(profile("fake", "    fake: { zone: a }\n    phony: { zone: b }\n")); len(d) != 0 {
		t.Errorf("fake target: %v", d)
	}
	if d := check(profile("phony", "    fake: {}\n")); len(d) != 1 || d[0].Severity != Warning || !strings.Contains(d[0].Message, `"phony" is a deprecated alias of "fake"`) {
		t.Errorf("alias: %v", d)
	}
	// A short name is a plain other name: no warning, in targets: or as the box key.
	if d := check(profile("short", "    short: { zone: a }\n")); len(d) != 0 {
		t.Errorf("short name: %v, want no diagnostic", d)
	}
	if d := check(profile("fake, short", "    {}\n")); !strings.Contains(d.String(), `target "fake" (as "short") is listed twice`) {
		t.Errorf("a target and its short name: %v, want the repeat reported", d)
	}
	if d := check(profile("fake", "    fake: [a]\n")); !d.HasErrors() || !strings.Contains(d.String(), "policy.box.fake") {
		t.Errorf("a list as policy.box.fake: %v", d)
	}
	if d := check(profile("fake", "    fakee: {}\n")); len(d) != 1 || !strings.Contains(d[0].Hint, `"fake"`) {
		t.Errorf("near miss of policy.box.fake: %v", d)
	}
	var schema struct {
		Properties struct {
			Targets struct {
				Items       struct{ Enum []string }
				Description string
			}
			Policy struct {
				Properties struct {
					Box struct{ Properties map[string]json.RawMessage }
				}
			}
		}
	}
	if err := json.Unmarshal(JSONSchema(), &schema); err != nil {
		t.Fatal(err)
	}
	if e := schema.Properties.Targets.Items.Enum; !slices.Contains(e, "fake") || !slices.Contains(e, "phony") {
		t.Errorf("schema targets enum %v lacks fake and its alias", e)
	}
	if d := schema.Properties.Targets.Description; !strings.Contains(d, "phony is a deprecated alias of fake") {
		t.Errorf("schema targets description %q", d)
	}
	var section map[string]any
	if err := json.Unmarshal(schema.Properties.Policy.Properties.Box.Properties["fake"], &section); err != nil || section["properties"] == nil {
		t.Errorf("schema policy.box.fake = %v (%v), want the declared section", section, err)
	}
	if _, ok := schema.Properties.Policy.Properties.Box.Properties["phony"]; !ok {
		t.Errorf("schema lacks policy.box.phony")
	}

	if d := schema.Properties.Targets.Description; !strings.Contains(d, "short is another name of fake") {
		t.Errorf("schema targets description %q lacks the short name", d)
	}
	if e := schema.Properties.Targets.Items.Enum; !slices.Contains(e, "short") {
		t.Errorf("schema targets enum %v lacks the short name", e)
	}

	unregister := RegisterTarget(Target{Name: "gone"})
	unregister()
	if d := check(profile("gone", "    {}\n")); !d.HasErrors() || !strings.Contains(d.String(), `unknown target "gone"`) {
		t.Errorf("unregistered target: %v", d)
	}
}
