package source

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
)

// PosOf is the position of a YAML node.
func PosOf(n *yaml.Node) ir.Pos { return ir.Pos{Line: n.Line, Col: n.Column} }

// IsNull reports whether n is an explicit or implicit null.
func IsNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// Describe names what a node is, for "must be a string, not ..." messages.
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.Tag {
	case "!!null":
		return "null"
	case "!!bool":
		return "a boolean (" + n.Value + ")"
	case "!!int", "!!float":
		return "a number (" + n.Value + ")"
	case "!!timestamp":
		return "a date (" + n.Value + ")"
	}
	return strconv.Quote(n.Value)
}

// Value is a string value and where it was written; a zero Pos means absent.
type Value struct {
	Value string
	Pos   ir.Pos
}

// Set reports whether the value was written.
func (v Value) Set() bool { return v.Pos.Line > 0 }

// Fields calls fn for each pair of mapping n in order and reports unknown keys (suggesting the
// nearest known one) and duplicate keys; where names the mapping in messages. A nil allowed
// accepts every key.
func Fields(r *Reporter, n *yaml.Node, where string, allowed []string, fn func(key string, k, v *yaml.Node)) {
	seen := map[string]ir.Pos{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if first, dup := seen[k.Value]; dup {
			r.Errorf(PosOf(k), fmt.Sprintf("remove one; the first is at line %d", first.Line), "duplicate key %q in %s", k.Value, where)
			continue
		}
		seen[k.Value] = PosOf(k)
		if allowed != nil && !contains(allowed, k.Value) {
			r.Errorf(PosOf(k), ir.Suggest(k.Value, allowed), "unknown key %q in %s", k.Value, where)
			continue
		}
		fn(k.Value, k, v)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Scalar decodes any scalar as its text (a number or a date is kept as written); what names it and
// example is the hint when it is missing, empty or not a scalar.
func Scalar(r *Reporter, n *yaml.Node, what, example string) (Value, bool) {
	switch {
	case n.Kind == yaml.ScalarNode && !IsNull(n) && strings.TrimSpace(n.Value) != "":
		return Value{n.Value, PosOf(n)}, true
	case n.Kind == yaml.ScalarNode && !IsNull(n):
		r.Errorf(PosOf(n), example, "%s is empty", what)
	case IsNull(n):
		r.Errorf(PosOf(n), example, "%s has no value", what)
	default:
		r.Errorf(PosOf(n), example, "%s must be a single value, not %s", what, Describe(n))
	}
	return Value{Pos: PosOf(n)}, false
}

// Str decodes a non-empty string; a number, boolean or date is refused with a hint to quote it.
func Str(r *Reporter, n *yaml.Node, what, example string) (Value, bool) {
	if n.Kind == yaml.ScalarNode && !IsNull(n) && n.Tag != "!!str" {
		r.Errorf(PosOf(n), "quote it: \""+n.Value+"\"", "%s must be a string, not %s", what, Describe(n))
		return Value{Pos: PosOf(n)}, false
	}
	return Scalar(r, n, what, example)
}

// StrList decodes a list of strings; a single string is refused with a hint to write a list.
func StrList(r *Reporter, n *yaml.Node, what, example string) []Value {
	if n.Kind != yaml.SequenceNode {
		if IsNull(n) {
			return nil
		}
		r.Errorf(PosOf(n), example, "%s must be a list, not %s", what, Describe(n))
		return nil
	}
	out := make([]Value, 0, len(n.Content))
	for _, item := range n.Content {
		if s, ok := Str(r, item, "an entry of "+what, example); ok {
			out = append(out, s)
		}
	}
	return out
}

// Mapping reports whether n is a mapping, reporting it when not.
func Mapping(r *Reporter, n *yaml.Node, what, example string) bool {
	if n.Kind == yaml.MappingNode {
		return true
	}
	if IsNull(n) {
		r.Errorf(PosOf(n), example, "%s has no value", what)
	} else {
		r.Errorf(PosOf(n), example, "%s must be a mapping, not %s", what, Describe(n))
	}
	return false
}
