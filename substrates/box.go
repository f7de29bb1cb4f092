package substrates

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
)

// TargetPos is where the profile asks for the substrate named by one of names: its
// policy.box entry, else its entry in targets, else targets itself. A problem of the whole
// output that no one key causes is reported there.
func TargetPos(p *ir.Profile, names ...string) ir.Pos {
	if box := p.Policy.Box; box != nil && box.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(box.Content); i += 2 {
			if k := box.Content[i]; slices.Contains(names, k.Value) {
				return ir.Pos{Line: k.Line, Col: k.Column}
			}
		}
	}
	for _, t := range p.Targets {
		for _, name := range names {
			if t.Value == name {
				return t.Pos
			}
		}
	}
	return p.TargetsPos
}

// BoxNode returns the mapping policy.box.<key> of the profile, or nil when it is absent or not
// a mapping (ir reports the latter).
func BoxNode(p *ir.Profile, keys ...string) *yaml.Node {
	box := p.Policy.Box
	if box == nil || box.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(box.Content); i += 2 {
		for _, k := range keys {
			if box.Content[i].Value == k {
				return box.Content[i+1]
			}
		}
	}
	return nil
}

// BoxReader reads a substrate's policy.box key, collecting every problem as a positioned
// diagnostic whose message starts with the key's path.
type BoxReader struct {
	File string
	// Prefix starts every message, e.g. "policy.box.local.".
	Prefix string
	Diags  ir.Diagnostics
}

// Errorf records an error at n.
func (r *BoxReader) Errorf(n *yaml.Node, hint, format string, args ...any) {
	r.Diags = append(r.Diags, ir.Diagnostic{File: r.File, Pos: ir.Pos{Line: n.Line, Col: n.Column}, Severity: ir.Error,
		Message: r.Prefix + fmt.Sprintf(format, args...), Hint: hint})
}

// Str reads a non-empty string.
func (r *BoxReader) Str(n *yaml.Node, what, example string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		r.Errorf(n, example, "%s must be a string", what)
		return "", false
	}
	if n.Value == "" {
		r.Errorf(n, example, "%s is empty", what)
		return "", false
	}
	return n.Value, true
}

// Int reads an integer in [min, max].
func (r *BoxReader) Int(n *yaml.Node, what, example string, min, max int) (int, bool) {
	var v int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil {
		r.Errorf(n, example, "%s must be a whole number", what)
		return 0, false
	}
	if v < min || v > max {
		r.Errorf(n, example, "%s is %d; it must be between %d and %d", what, v, min, max)
		return 0, false
	}
	return v, true
}

// Bool reads true or false.
func (r *BoxReader) Bool(n *yaml.Node, what, example string) (bool, bool) {
	var v bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&v) != nil {
		r.Errorf(n, example, "%s must be true or false", what)
		return false, false
	}
	return v, true
}

// Argv reads a command as a list of words, so no word is ever split or reinterpreted by a shell.
// It returns nil after an error, and an empty non-nil slice for an empty list.
func (r *BoxReader) Argv(n *yaml.Node, what, example string) []string {
	if n.Kind != yaml.SequenceNode {
		r.Errorf(n, example+": one word per item, never a shell string", "%s must be a list of words", what)
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		s, ok := r.Str(c, what+" item", example)
		if !ok {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// NearMiss warns about a key of a substrate's policy.box section that nothing reads but that is a
// near miss of one of known: it would silently not be read. Any other unknown key is governance
// data carried verbatim (in .autonomy/policy.json), never refused.
func (r *BoxReader) NearMiss(k *yaml.Node, known []string) {
	if hint := ir.Suggest(k.Value, known); strings.HasPrefix(hint, "did you mean") {
		r.Diags = append(r.Diags, ir.Diagnostic{File: r.File, Pos: ir.Pos{Line: k.Line, Col: k.Column}, Severity: ir.Warning,
			Message: r.Prefix + k.Value + " is carried verbatim and read by nothing", Hint: hint})
	}
}
