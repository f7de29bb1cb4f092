package engine

import (
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/playbook/workflow"
)

// FuzzWords: splitting never panics, and a pipeline that splits becomes a workflow the format
// reads without a parse error.
func FuzzWords(f *testing.F) {
	for _, s := range []string{`a b`, `'x y' "p \"q\"" z`, `echo hi; touch pwned`, `cli a | approve "ok?" | cli b`, `a\`, `"`, `'`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := Words(s)
		if err == nil {
			for _, w := range words {
				if w == "" && !strings.ContainsAny(s, `'"`) {
					t.Fatalf("Words(%q) gave an empty word without quotes", s)
				}
			}
		}
		if y, err := inline(s); err == nil {
			if _, diags := workflow.Parse("<pipeline>", y); diags.HasErrors() {
				t.Fatalf("inline(%q) wrote a workflow that does not parse:\n%s\n%s", s, y, diags)
			}
		}
	})
}
