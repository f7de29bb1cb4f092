package local

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// maxToolCap bounds a cap a profile sets: a session never needs more effects of one kind.
const maxToolCap = 1000

// readTools reads policy.box.local.tools: { max: { TOOL: N } }, the caps of a session's tools
// (tools.DefaultMax for a tool it does not name), counted by the runner (spend.go). staged is
// gh-actions' only: the local runner realizes an effect when it is called.
func readTools(r *substrates.BoxReader, v *yaml.Node) map[string]int {
	const example = "e.g. tools: { max: { comment: 3, launch: 1 } }"
	if v.Kind != yaml.MappingNode {
		r.Errorf(v, example, "tools must be a mapping")
		return nil
	}
	var out map[string]int
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		switch k.Value {
		case "max":
			out = readToolMax(r, val)
		case "staged":
			r.Errorf(k, "staged is policy.box.gh-actions.tools.staged: the local runner realizes an effect when the tool is called", "tools.staged does not apply locally")
		default:
			r.Errorf(k, ir.Suggest(k.Value, []string{"max"}), "tools: unknown key %q", k.Value)
		}
	}
	return out
}

// readToolMax reads tools.max: each key a tool that changes something, each value a count.
func readToolMax(r *substrates.BoxReader, v *yaml.Node) map[string]int {
	if v.Kind != yaml.MappingNode {
		r.Errorf(v, "e.g. max: { comment: 3, launch: 1 }", "tools.max must be a mapping of tool names to counts")
		return nil
	}
	var effects []string
	for _, t := range tools.Catalog {
		if t.Effect {
			effects = append(effects, t.Name)
		}
	}
	out := map[string]int{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, n := v.Content[i], v.Content[i+1]
		if !slices.Contains(effects, k.Value) {
			hint := ir.Suggest(k.Value, effects)
			if !strings.HasPrefix(hint, "did you mean") {
				hint = "the tools that change something are " + strings.Join(effects, ", ")
			}
			r.Errorf(k, hint, "tools.max: %q is not a tool that changes anything", k.Value)
			continue
		}
		if c, ok := r.Int(n, "tools.max."+k.Value, "e.g. "+k.Value+": 3 (0 refuses every "+k.Value+")", 0, maxToolCap); ok {
			out[k.Value] = c
		}
	}
	return out
}
