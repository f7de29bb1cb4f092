package workflow

import (
	"testing"

	"github.com/autonomyhq/autonomy/playbook/internal/casetest"
)

// FuzzParse feeds arbitrary bytes to the parser and validator: no panic, every diagnostic
// positioned and sorted, and a workflow that passes has a name and steps.
func FuzzParse(f *testing.F) {
	casetest.Seeds(f, "testdata")
	f.Add([]byte("name: x\nsteps:\n- id: a\n  command: cli $a.json.x $b.approved\n  condition: \"$a.stdout\"\n"))
	f.Add([]byte("a: &a [*a, *a]\nb: &b [*a, *a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, diags := Check("f.yml", data)
		casetest.Sane(t, data, diags)
		if w == nil && !diags.HasErrors() {
			t.Fatal("no workflow and no error")
		}
		if w != nil && !diags.HasErrors() && (w.Name.Value == "" || len(w.Steps) == 0) {
			t.Fatal("a workflow without a name or steps passed")
		}
	})
}
