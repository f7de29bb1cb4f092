package ghactions

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// The workflow is built as a small ordered tree and written by hand rather than through yaml.v3's
// encoder: the layout (block style, a version comment after a pinned action, literal run scripts)
// is part of the output contract, and the encoder is several times slower on 10,000 workflows.

// mapping is an ordered YAML mapping.
type mapping []kv

// kv is one entry of a mapping; comment is written after a scalar value.
type kv struct {
	key     string
	value   any // string, plain, literal, int, bool, mapping, seq, *yaml.Node
	comment string
}

// seq is a YAML sequence.
type seq []any

// plain is a scalar written exactly as given: an expression or a token known to be safe.
type plain string

// literal is a run script, written as a literal block scalar.
type literal string

func (m *mapping) add(key string, value any) { *m = append(*m, kv{key: key, value: value}) }

func (m mapping) get(key string) (any, bool) {
	for _, e := range m {
		if e.key == key {
			return e.value, true
		}
	}
	return nil, false
}

// emitter writes YAML with two-space indentation.
type emitter struct {
	b bytes.Buffer
}

func (e *emitter) indent(n int) {
	for i := 0; i < n; i++ {
		e.b.WriteString("  ")
	}
}

// mappingBody writes the entries of m at indentation depth.
func (e *emitter) mappingBody(m mapping, depth int) {
	for _, it := range m {
		e.indent(depth)
		if it.key == "on" {
			// GitHub documents the trigger key unquoted, and its parser reads it as a string.
			e.b.WriteString("on")
		} else {
			e.b.WriteString(quote(it.key))
		}
		e.b.WriteByte(':')
		e.value(it.value, depth, it.comment)
	}
}

// value writes v after "key:" or "- ", at depth (the depth of its key).
func (e *emitter) value(v any, depth int, comment string) {
	switch v := v.(type) {
	case mapping:
		if len(v) == 0 {
			e.b.WriteString(" {}\n")
			return
		}
		e.b.WriteByte('\n')
		e.mappingBody(v, depth+1)
	case seq:
		if len(v) == 0 {
			e.b.WriteString(" []\n")
			return
		}
		if flow, ok := flowSeq(v); ok {
			e.b.WriteByte(' ')
			e.b.WriteString(flow)
			e.b.WriteByte('\n')
			return
		}
		e.b.WriteByte('\n')
		for _, item := range v {
			e.indent(depth + 1)
			e.b.WriteString("-")
			if m, ok := item.(mapping); ok && len(m) > 0 {
				// The first entry shares the dash's line.
				e.b.WriteByte(' ')
				e.b.WriteString(quote(m[0].key))
				e.b.WriteByte(':')
				e.value(m[0].value, depth+2, m[0].comment)
				e.mappingBody(m[1:], depth+2)
				continue
			}
			e.value(item, depth+1, "")
		}
	case literal:
		e.b.WriteString(" |\n")
		for _, line := range strings.Split(strings.TrimSuffix(string(v), "\n"), "\n") {
			if line != "" {
				e.indent(depth + 1)
				e.b.WriteString(line)
			}
			e.b.WriteByte('\n')
		}
	case *yaml.Node:
		e.node(v, depth)
	default:
		e.b.WriteByte(' ')
		e.b.WriteString(scalar(v))
		if comment != "" {
			e.b.WriteString(" # ")
			e.b.WriteString(comment)
		}
		e.b.WriteByte('\n')
	}
}

// node writes a YAML node carried verbatim from the profile (an event config), in block style.
func (e *emitter) node(n *yaml.Node, depth int) {
	e.value(fromNode(n), depth, "")
}

// fromNode converts a profile node into the emitter's tree, keeping each scalar's type: a value
// the profile quoted stays a string, a plain true stays a boolean.
func fromNode(n *yaml.Node) any {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(mapping, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m = append(m, kv{key: n.Content[i].Value, value: fromNode(n.Content[i+1])})
		}
		return m
	case yaml.SequenceNode:
		s := make(seq, 0, len(n.Content))
		for _, c := range n.Content {
			s = append(s, fromNode(c))
		}
		return s
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str", "":
			return n.Value
		case "!!null":
			return plain("null")
		case "!!bool", "!!int", "!!float":
			return plain(n.Value) // the profile's own plain spelling, which resolved to this type
		default:
			return n.Value
		}
	}
	return plain("null")
}

// flowSeq renders a short list of plain-safe strings in flow style, as people write filters.
func flowSeq(s seq) (string, bool) {
	var b strings.Builder
	b.WriteByte('[')
	for i, item := range s {
		var text string
		switch v := item.(type) {
		case string:
			if !plainSafe(v) || strings.ContainsAny(v, ",[]{}") {
				return "", false
			}
			text = v
		case plain:
			if strings.ContainsAny(string(v), ",[]{}") {
				return "", false
			}
			text = string(v)
		default:
			return "", false
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(text)
	}
	b.WriteByte(']')
	if b.Len() > 80 {
		return "", false
	}
	return b.String(), true
}

func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case plain:
		return string(v)
	case int:
		return strconv.Itoa(v)
	case bool:
		return strconv.FormatBool(v)
	}
	panic("ghactions: unexpected scalar type") // a bug in this package, not bad input
}

// quote writes s as a YAML string: plain when that reads back as the same string, double-quoted
// otherwise.
func quote(s string) string {
	if plainSafe(s) {
		return s
	}
	return strconv.Quote(s) // Go's escapes are a subset of YAML's double-quoted escapes
}

// plainSafe reports whether s can be written as a plain scalar, in block context, and read back
// by any YAML 1.1 or 1.2 parser as the same string.
func plainSafe(s string) bool {
	n := len(s)
	if n == 0 || s[0] == ' ' || s[n-1] == ' ' {
		return false
	}
	if s[0] == '-' && (n == 1 || s[1] == ' ' || strings.HasPrefix(s, "---")) {
		return false
	}
	switch s[0] {
	case '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	for i := 0; i < n; i++ {
		switch c := s[i]; {
		case c < 0x20 || c == 0x7f:
			return false
		case c == ':' && (i == n-1 || s[i+1] == ' '):
			return false
		case c == '#' && i > 0 && s[i-1] == ' ':
			return false
		case c >= 0x80:
			// Outside ASCII, anything YAML or a reader could take for a break, a space or a
			// control is quoted.
			for _, r := range s[i:] {
				if r == 0xfeff || !unicode.IsPrint(r) {
					return false
				}
			}
			i = n
		}
	}
	if n <= 5 {
		for _, k := range [...]string{"true", "false", "yes", "no", "y", "n", "on", "off", "null", "~", "<<", "="} {
			if strings.EqualFold(s, k) {
				return false
			}
		}
	}
	// Anything that starts like a number, a timestamp or .inf/.nan is quoted.
	c := s[0]
	if c != '+' && c != '-' && c != '.' && (c < '0' || c > '9') {
		return true
	}
	num := strings.TrimLeft(s, "+-")
	if len(num) < n-1 {
		return false // "--x" or "+-1": never a number, but not worth the risk either
	}
	num = strings.TrimPrefix(num, ".")
	if num == "" {
		return s == "-"
	}
	if num[0] >= '0' && num[0] <= '9' {
		return false
	}
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case ".inf", ".nan":
		return false
	}
	return true
}
