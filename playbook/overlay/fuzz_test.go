package overlay

import (
	"testing"

	"github.com/autonomyhq/autonomy/playbook/internal/casetest"
)

// FuzzParse feeds arbitrary bytes to the parser and validator, and the result to Index: no panic,
// every diagnostic positioned and sorted, and an index that renders the same twice.
func FuzzParse(f *testing.F) {
	casetest.Seeds(f, "testdata")
	f.Add([]byte("---\nschema: playbooks/v1\ntargets: [{kind: role, ref: \"a|b\\nc\"}]\nttl: PT\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, diags := Check("x.md", data)
		casetest.Sane(t, data, diags)
		if o == nil {
			if !diags.HasErrors() {
				t.Fatal("no overlay and no error")
			}
			return
		}
		if a, b := Index([]*Overlay{o}), Index([]*Overlay{o}); string(a) != string(b) {
			t.Fatal("index not deterministic")
		}
	})
}
