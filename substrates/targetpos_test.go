package substrates

import (
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// TargetPos names the key that asks for a substrate: its policy.box entry's key, however the
// entry is written, else its entry in targets (by any of its names), else targets itself.
func TestTargetPosIsTheKeyThatAsks(t *testing.T) {
	head := "schema: autonomy.ir.v1\ntargets: [local, github]\nactors:\n  a:\n    behavior: scripts/a.sh\n    triggers: [{ dispatch: true }]\n"
	for _, tc := range []struct {
		name, policy string
		want         ir.Pos
	}{
		{"flow entry", "policy:\n  box:\n    gh-actions: { model: m }\n", ir.Pos{Line: 9, Col: 5}},
		{"block entry", "policy:\n  box:\n    local: {}\n    gh-actions:\n      model: m\n", ir.Pos{Line: 10, Col: 5}},
		{"null entry", "policy:\n  box:\n    gh-actions:\n", ir.Pos{Line: 9, Col: 5}},
		{"an alias's entry", "policy:\n  box:\n    github: { model: m }\n", ir.Pos{Line: 9, Col: 5}},
		{"no box entry: the target", "", ir.Pos{Line: 2, Col: 18}},
	} {
		p, _ := ir.Parse("ir.yml", ".", []byte(head+tc.policy))
		if p == nil {
			t.Fatalf("%s: no profile", tc.name)
		}
		if got := TargetPos(p, "gh-actions", "github"); got != tc.want {
			t.Errorf("%s: %d:%d, want %d:%d", tc.name, got.Line, got.Col, tc.want.Line, tc.want.Col)
		}
	}
}
