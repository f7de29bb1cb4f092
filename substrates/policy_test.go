package substrates

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// TestPolicyFile: the whole policy block reaches the agents as JSON in the profile's order, with
// keys nothing reads carried, null values left out, human_required_paths verbatim (never
// augmented) and the governing documents as their own member.
func TestPolicyFile(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "skills/a"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "skills/a/SKILL.md"), []byte("# a\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "ir.yml"), []byte(`schema: autonomy.ir.v1
targets: [fake]
documents:
  roles: { vision: docs/VISION.md, constitution: docs/CONSTITUTION.md, roadmap: ROADMAP.md }
agents:
  a: { behavior: a, triggers: [{ dispatch: true }] }
policy:
  maxConcurrent: 2
  box:
    zeta: { nested: [1, 2.5, "x", true, null], "<html>": "a & b" }
    tracker: { ztrackPreset: simple-gh-sdlc }
    human: { maintainers_var: PUBLIC_AGENT_MAINTAINERS, sla_minutes: ~ }
    gh-actions: ~
    risk:
      human_required_paths: [".github/workflows/**", docs/VISION.md]
    alpha: 1
`), 0o644))
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v\n%s", err, diags)
	}
	f := PolicyFile(p)
	if f.Path != PolicyPath || f.Header != JSONHeader || !jsonBodyOK(f.Data) {
		t.Fatalf("policy file %s header %v:\n%s", f.Path, f.Header, f.Data)
	}
	var got map[string]any
	if err := json.Unmarshal(f.Data, &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, f.Data)
	}
	want := map[string]any{
		"maxConcurrent": 2.0,
		"box": map[string]any{
			"zeta":    map[string]any{"nested": []any{1.0, 2.5, "x", true, nil}, "<html>": "a & b"},
			"tracker": map[string]any{"ztrackPreset": "simple-gh-sdlc"},
			"human":   map[string]any{"maintainers_var": "PUBLIC_AGENT_MAINTAINERS"},
			"risk":    map[string]any{"human_required_paths": []any{".github/workflows/**", "docs/VISION.md"}},
			"alpha":   1.0,
		},
		"governingDocuments": []any{"docs/VISION.md", "docs/CONSTITUTION.md"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("policy.json =\n%s\nwant %v", f.Data, want)
	}
	// The profile's order is kept (zeta before alpha), so the file reads like the profile.
	if s := string(f.Data); strings.Index(s, `"zeta"`) > strings.Index(s, `"alpha"`) || !strings.Contains(s, `"a & b"`) {
		t.Errorf("order or escaping lost:\n%s", s)
	}
	// human_required_paths is the profile's, verbatim; the governing documents are their own list.
	if got := p.HumanRequiredPaths(); !reflect.DeepEqual(got, []string{".github/workflows/**", "docs/VISION.md"}) {
		t.Errorf("HumanRequiredPaths = %q", got)
	}
	if again := PolicyFile(p); string(again.Data) != string(f.Data) {
		t.Errorf("a second PolicyFile differs:\n%s", again.Data)
	}
}
