package capsule

import (
	"testing"

	"github.com/autonomyhq/autonomy/playbook/internal/casetest"
)

// FuzzParse feeds arbitrary bytes to the parser, the checks and the library rules (the input
// validated with itself and a copy): no panic, every diagnostic positioned and sorted.
func FuzzParse(f *testing.F) {
	casetest.Seeds(f, "testdata")
	f.Add([]byte("---\nsupersedes: x\nsuperseded_by: x\ncalls: [x]\ncomposes_into: [{playbook: x}]\n---\n## Verification\nmethod:\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, diags := Check("x.playbook.md", data)
		casetest.Sane(t, data, diags)
		if p == nil {
			if !diags.HasErrors() {
				t.Fatal("no playbook and no error")
			}
			return
		}
		q, _ := Check("y.playbook.md", data)
		casetest.Sane(t, data, ValidateLibrary([]*Playbook{p, q}).Sort())
	})
}
