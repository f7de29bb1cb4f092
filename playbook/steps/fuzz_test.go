package steps

import (
	"testing"

	"github.com/autonomyhq/autonomy/playbook/internal/casetest"
)

// FuzzParse feeds arbitrary bytes to the parser and validator: no panic, every diagnostic
// positioned, sorted, and a playbook that parsed has a title and a step unless an error says so.
func FuzzParse(f *testing.F) {
	casetest.Seeds(f, "testdata")
	f.Add([]byte("# T\n## STEP 1: a\n```if x == \"y\"```\n### STEP 1a: b\n```elif\n```else```\n@elicit(\n@tool(,,)\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, diags := Check("f.md", data)
		casetest.Sane(t, data, diags)
		if p == nil && !diags.HasErrors() {
			t.Fatal("no playbook and no error")
		}
		if p != nil && !diags.HasErrors() && (p.Title.Value == "" && !p.Title.Pos.IsSet() || len(p.Steps) == 0) {
			t.Fatal("a playbook without a title or a step passed")
		}
	})
}
