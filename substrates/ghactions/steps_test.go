package ghactions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
)

// TestStepPlaybookElicitRefusals: an actor whose step playbook asks a person needs, on
// gh-actions, the power to post the ask, a work item to post it on, and no code:propose (the
// resumed run checks out anew); each missing piece is a compile error at the profile's line and
// column, naming the @elicit and the fix. Without an @elicit none of them is needed.
func TestStepPlaybookElicitRefusals(t *testing.T) {
	book, err := os.ReadFile("../../profiles/steps-triage/playbooks/triage.md")
	if err != nil {
		t.Fatal(err)
	}
	noElicit := strings.Replace(string(book), "@elicit(select, \"Which team owns issue #{{ITEM}}?\", \"api\", \"ui\")\n", "", 1)
	for _, c := range []struct {
		name, caps, params, book string
		want                     []string // in the error; empty: compiles
	}{
		{"ok", "[tasks:converse]", "{ ITEM: subject.ref, REPORT: subject.text }", string(book), nil},
		{"no tasks capability", "[]", "{ ITEM: subject.ref, REPORT: subject.text }", string(book),
			[]string{"ir.yml:8:19: actor \"triage\": its step playbook asks a person (@elicit at ", "triage.md:41:1)", "holds neither tasks:converse nor tasks:author", "add tasks:converse to its capabilities"}},
		{"no work item", "[tasks:converse]", "{ REPORT: subject.text }", string(book),
			[]string{"ir.yml:9:5: actor \"triage\"", "no trigger forwards the work item (subject.ref)", "params: { ITEM: subject.ref }"}},
		{"proposes", "[tasks:converse, code:propose]", "{ ITEM: subject.ref, REPORT: subject.text }", string(book),
			[]string{"ir.yml:8:36: actor \"triage\"", "the changes made before the elicitation would not be proposed", "drop code:propose"}},
		{"proposes without an elicit", "[tasks:converse, code:propose]", "{ REPORT: subject.text }", noElicit, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			irYML := "schema: autonomy.ir.v1\ntargets: [gh-actions]\ncodeHost: github\nactors:\n  triage:\n    behavior: playbooks/triage.md\n" +
				"    # the actor's capabilities and triggers\n    capabilities: " + c.caps + "\n    triggers:\n      - dispatch: true\n        params: " + c.params + "\n"
			for name, data := range map[string]string{"ir.yml": irYML, "playbooks/triage.md": c.book} {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, diags, err := ir.Check(dir)
			if err != nil || diags.HasErrors() {
				t.Fatalf("%v %s", err, diags)
			}
			out, err := Substrate{}.Compile(resolve(p))
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("compile: %v", err)
				}
				var wf struct {
					On   map[string]any `yaml:"on"`
					Jobs map[string]any `yaml:"jobs"`
				}
				for _, f := range out.Files {
					if f.Path == WorkflowPath("triage") {
						if err := yaml.Unmarshal(f.Data, &wf); err != nil {
							t.Fatal(err)
						}
					}
				}
				_, resume := wf.Jobs["resume"]
				if elicits := strings.Contains(c.book, "@elicit"); resume != elicits {
					t.Errorf("jobs %v: a resume job %v, want %v", wf.Jobs, resume, elicits)
				}
				return
			}
			if err == nil {
				t.Fatal("compiled")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
