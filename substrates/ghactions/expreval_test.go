package ghactions

import (
	"testing"

	"github.com/autonomyhq/autonomy/substrates/ghactions/ghexpr"
)

// evalExpr evaluates a "${{ … }}" value the way GitHub would (ghexpr.Eval), failing the test on
// an expression it cannot evaluate.
func evalExpr(t *testing.T, value string, ctx map[string]any) string {
	t.Helper()
	v, err := ghexpr.Eval(value, ctx)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
