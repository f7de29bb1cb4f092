package fastyaml

import (
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Flow collections and the flow scalar styles (plain, single- and double-quoted) must fit on
// one line: the subset leaves their multi-line forms, and the folding rules that come with
// them, to yaml.v3.

// flowNode parses a flow collection or scalar at p.i in flow context.
func (p *parser) flowNode() *yaml.Node {
	p.enter()
	defer p.leave()
	switch p.peek() {
	case '[':
		return p.flowSeq()
	case '{':
		return p.flowMap()
	case '"', '\'':
		return p.quoted()
	}
	return p.plain(true)
}

// flowSeq parses "[a, b, ...]". Trailing commas, "[a: b]" pairs and empty entries are outside
// the subset; they surface here as a token that cannot start a node, or as an unexpected byte
// where ',' or ']' should be.
func (p *parser) flowSeq() *yaml.Node {
	seq := p.node(yaml.SequenceNode, seqTag, "", yaml.FlowStyle, p.line, p.column(p.i))
	base := len(p.kids)
	p.i++
	p.skipSpaces()
	if p.peek() == ']' {
		p.i++
		return seq
	}
	for {
		p.kids = append(p.kids, p.flowNode())
		p.skipSpaces()
		switch p.peek() {
		case ',':
			p.i++
			p.skipSpaces()
		case ']':
			p.i++
			p.collect(seq, base)
			return seq
		default:
			p.bail()
		}
	}
}

// flowMap parses "{k: v, ...}" with scalar keys and explicit values.
func (p *parser) flowMap() *yaml.Node {
	m := p.node(yaml.MappingNode, mapTag, "", yaml.FlowStyle, p.line, p.column(p.i))
	base := len(p.kids)
	p.i++
	p.skipSpaces()
	if p.peek() == '}' {
		p.i++
		return m
	}
	for {
		start := p.i
		var key *yaml.Node
		switch p.peek() {
		case '"', '\'':
			key = p.quoted()
		default:
			key = p.plain(true)
		}
		p.skipSpaces()
		// In flow context libyaml takes any ':' here as the value indicator, even one not
		// followed by a blank ("{"a":b}"); a plain key never ends at such a ':' since it would
		// have been part of the key.
		if p.peek() != ':' || p.i-start > maxKeyLen {
			p.bail()
		}
		p.i++
		p.skipSpaces()
		val := p.flowNode()
		p.kids = append(p.kids, key, val)
		p.skipSpaces()
		switch p.peek() {
		case ',':
			p.i++
			p.skipSpaces()
		case '}':
			p.i++
			p.collect(m, base)
			return m
		default:
			p.bail()
		}
	}
}

// plain scans a single-line plain scalar at p.i. In block context it ends before ": ", " #"
// or the line break; in flow context also before ",?[]{}", and running into the line break
// means the scalar, or its collection, continues on the next line, which the subset excludes.
func (p *parser) plain(flow bool) *yaml.Node {
	s, start := p.s, p.i
	if !plainStart(s, start) {
		p.bail()
	}
	i, end := start, start
scan:
	for i < len(s) {
		if !plainStop[s[i]] {
			i++
			end = i
			continue
		}
		switch s[i] {
		case ' ':
			i++
			if i < len(s) && s[i] == '#' {
				break scan
			}
			continue
		case '\n', '\r':
			break scan
		case '\t':
			p.bail()
		case ':':
			if blankz(s, i+1) {
				break scan
			}
		case ',', '?', '[', ']', '{', '}':
			if flow {
				break scan
			}
		}
		i++
		end = i
	}
	if flow && (i == len(s) || s[i] == '\n' || s[i] == '\r' || s[i] == '#') {
		p.bail()
	}
	v := s[start:end]
	if v == "<<" {
		// Merge keys get the !!merge tag and special meaning; not in the subset.
		p.bail()
	}
	n := p.node(yaml.ScalarNode, resolvePlain(v), v, 0, p.line, p.column(start))
	p.i = end
	return n
}

// plainStop marks the bytes at which plain scans for the end of a scalar.
var plainStop = func() (t [256]bool) {
	for _, c := range []byte(" \t\n\r:,?[]{}") {
		t[c] = true
	}
	return t
}()

// plainStart reports whether a plain scalar may start at s[i]. libyaml also starts plain
// scalars with '?' or ':' followed by a non-blank in block context; the subset does not.
func plainStart(s string, i int) bool {
	if i == len(s) {
		return false
	}
	switch s[i] {
	case '-':
		// "- " is a sequence entry; "-1" or "-x" are scalars.
		return !blankz(s, i+1)
	case ' ', '\t', '\n', '\r', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	return true
}

// quoted scans a single-line single- or double-quoted scalar at p.i. The value is a substring
// of the input unless escapes force a copy.
func (p *parser) quoted() *yaml.Node {
	s, start := p.s, p.i
	q := s[start]
	style := yaml.DoubleQuotedStyle
	if q == '\'' {
		style = yaml.SingleQuotedStyle
	}
	var buf []byte
	escaped := false
	i, lit := start+1, start+1 // lit: start of the run not yet copied to buf
	for {
		if i >= len(s) {
			p.bail()
		}
		switch c := s[i]; {
		case c == '\n' || c == '\r' || c == '\t':
			p.bail()
		case c == '\'' && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			buf = append(buf, s[lit:i+1]...)
			escaped = true
			i += 2
			lit = i
			continue
		case c == q:
			v := s[start+1 : i]
			if escaped {
				v = string(append(buf, s[lit:i]...))
			}
			n := p.node(yaml.ScalarNode, strTag, v, style, p.line, p.column(start))
			p.i = i + 1
			return n
		case c == '\\' && q == '"':
			buf = append(buf, s[lit:i]...)
			escaped = true
			i = p.escape(&buf, i+1)
			lit = i
			continue
		}
		i++
	}
}

// escape appends the character denoted by the double-quoted escape sequence whose letter is at
// s[i] and returns the offset after the sequence. The set is libyaml's; notably "\/" is not
// part of it, and yaml.v3 rejects it.
func (p *parser) escape(buf *[]byte, i int) int {
	s := p.s
	if i >= len(s) {
		p.bail()
	}
	var r rune
	digits := 0
	switch s[i] {
	case '0':
		r = 0
	case 'a':
		r = '\a'
	case 'b':
		r = '\b'
	case 't':
		r = '\t'
	case 'n':
		r = '\n'
	case 'v':
		r = '\v'
	case 'f':
		r = '\f'
	case 'r':
		r = '\r'
	case 'e':
		r = 0x1B
	case ' ', '"', '\'', '\\':
		r = rune(s[i])
	case 'N':
		r = 0x85
	case '_':
		r = 0xA0
	case 'L':
		r = 0x2028
	case 'P':
		r = 0x2029
	case 'x':
		digits = 2
	case 'u':
		digits = 4
	case 'U':
		digits = 8
	default:
		// Escaped line breaks and tabs, and anything libyaml rejects.
		p.bail()
	}
	i++
	if digits > 0 {
		if i+digits > len(s) {
			p.bail()
		}
		for _, c := range []byte(s[i : i+digits]) {
			d, ok := unhex(c)
			if !ok {
				p.bail()
			}
			r = r<<4 | d
		}
		i += digits
		if (r >= 0xD800 && r <= 0xDFFF) || r > 0x10FFFF || r < 0 {
			p.bail()
		}
	}
	*buf = utf8.AppendRune(*buf, r)
	return i
}

func unhex(c byte) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0'), true
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10), true
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10), true
	}
	return 0, false
}
