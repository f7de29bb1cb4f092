package ghactions

import (
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/substrates/ghactions/wire"
)

// TestApplyVerifiesEveryContract: the manifest names the contract the apply job verifies for each
// actor (the default, a declared named one, or where a declared inline schema is installed), and
// each such actor has an apply job that exports its result; a reviewer's verdict (checked by its
// review job) and an actor that opts out are not verified there.
func TestApplyVerifiesEveryContract(t *testing.T) {
	const triggers = "    triggers:\n" + dispatchRef
	src := head +
		"  a:\n    behavior: skills/a\n    capabilities: []\n" + triggers +
		"  named:\n    behavior: skills/a\n    capabilities: []\n" + triggers + "    result: { schema: open-autonomy.review.v1 }\n" +
		"  inline:\n    behavior: skills/a\n    capabilities: []\n" + triggers + "    result: { schema: { type: object, required: [labels] } }\n" +
		"  optout:\n    behavior: skills/a\n    capabilities: []\n" + triggers + "    result: { schema: none }\n" +
		"  rev:\n    behavior: skills/a\n    capabilities: [code:review]\n" + triggers + "    result: { schema: autonomy.review.v1 }\n"
	out := compileOK(t, src)
	var m struct{ Actors []wire.ManifestActor }
	if err := json.Unmarshal([]byte(file(t, out, ManifestPath)), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"a":      {"autonomy.result.v1", ""},
		"named":  {"open-autonomy.review.v1", ""},
		"inline": {"", ".autonomy/results/inline.json"},
		"optout": {"", ""},
		"rev":    {"", ""},
	}
	for _, a := range m.Actors {
		w := want[a.Name]
		if got := [2]string{a.Result, a.ResultSchema}; got != w {
			t.Errorf("%s: result, resultSchema = %q, want %q", a.Name, got, w)
		}
		wf := file(t, out, WorkflowPath(a.Name))
		verified := w != [2]string{}
		if _, has := jobs(t, wf)["apply"]; has != verified {
			t.Errorf("%s: has an apply job: %v, want %v", a.Name, has, verified)
		}
		if exports := containsStep(t, wf, "agent", "autonomy-outputs/result.json"); exports != verified {
			t.Errorf("%s: exports its result: %v, want %v", a.Name, exports, verified)
		}
	}
}

// jobs parses a workflow and returns its jobs by id.
func jobs(t *testing.T, wf string) map[string]any {
	t.Helper()
	var doc struct {
		Jobs map[string]any `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(wf), &doc); err != nil {
		t.Fatalf("workflow does not parse: %v\n%s", err, wf)
	}
	return doc.Jobs
}

// containsStep reports whether a step of the job id runs a script containing s.
func containsStep(t *testing.T, wf, id, s string) bool {
	t.Helper()
	steps, _ := job(t, wf, id)["steps"].([]any)
	for _, st := range steps {
		if m, ok := st.(map[string]any); ok {
			if run, ok := m["run"].(string); ok && strings.Contains(run, s) {
				return true
			}
		}
	}
	return false
}
