package fastyaml

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// blockScalar parses a literal (|) or folded (>) block scalar whose indicator is at p.i, and
// moves to the next content line. parent is the indentation of the enclosing block collection,
// -1 at the root: libyaml's parser.indent, from which it derives the scalar's indentation. The
// scanning below follows yaml_parser_scan_block_scalar step by step, since chomping and
// folding have many corner cases; only tabs in the header are left to yaml.v3.
func (p *parser) blockScalar(parent int) *yaml.Node {
	s := p.s
	line, col := p.line, p.column(p.i)
	literal := s[p.i] == '|'
	p.i++

	// Header: chomping and indentation indicators in either order, then an optional comment.
	chomping, increment := 0, 0
	for range 2 {
		switch c := p.peek(); {
		case chomping == 0 && (c == '+' || c == '-'):
			chomping = 1
			if c == '-' {
				chomping = -1
			}
			p.i++
		case increment == 0 && c >= '1' && c <= '9':
			increment = int(c - '0')
			p.i++
		}
	}
	p.skipSpaces()
	switch p.peek() {
	case 0, '\n', '\r':
	case '#':
		if s[p.i-1] != ' ' {
			p.bail()
		}
		p.skipComment()
	default:
		p.bail()
	}
	p.newline()

	indent := 0
	if increment > 0 {
		indent = increment
		if parent >= 0 {
			indent += parent
		}
	}

	var b strings.Builder
	leadingBreak := false
	trailingBreaks := p.blockScalarBreaks(&indent, parent)
	leadingBlank := false
	for p.i-p.lineStart == indent && p.i < len(s) {
		// At the start of a non-empty line's content.
		trailingBlank := s[p.i] == ' ' || s[p.i] == '\t'
		if !literal && !leadingBlank && !trailingBlank && leadingBreak {
			if trailingBreaks == 0 {
				b.WriteByte(' ')
			}
		} else if leadingBreak {
			b.WriteByte('\n')
		}
		for range trailingBreaks {
			b.WriteByte('\n')
		}
		leadingBlank = trailingBlank

		end := len(s)
		if k := strings.IndexByte(s[p.i:], '\n'); k >= 0 {
			end = p.i + k
			if s[end-1] == '\r' {
				end--
			}
		}
		b.WriteString(s[p.i:end])
		p.i = end
		leadingBreak = p.i < len(s)
		p.newline()
		trailingBreaks = p.blockScalarBreaks(&indent, parent)
	}
	if chomping != -1 && leadingBreak {
		b.WriteByte('\n')
	}
	if chomping == 1 {
		for range trailingBreaks {
			b.WriteByte('\n')
		}
	}
	style := yaml.LiteralStyle
	if !literal {
		style = yaml.FoldedStyle
	}
	n := p.node(yaml.ScalarNode, strTag, b.String(), style, line, col)
	p.skipToContent()
	return n
}

// blockScalarBreaks follows yaml_parser_scan_block_scalar_breaks: it consumes indentation and
// empty lines up to the next non-empty line, or the end of the input, and returns how many line
// breaks it consumed. An indentation of 0 means "not known yet": it is then set from the
// deepest indentation seen, but at least one more than parent's.
func (p *parser) blockScalarBreaks(indent *int, parent int) int {
	s := p.s
	breaks, maxIndent := 0, 0
	for {
		for (*indent == 0 || p.i-p.lineStart < *indent) && p.peek() == ' ' {
			p.i++
		}
		maxIndent = max(maxIndent, p.i-p.lineStart)
		if (*indent == 0 || p.i-p.lineStart < *indent) && p.peek() == '\t' {
			p.bail()
		}
		if p.i == len(s) || (s[p.i] != '\n' && s[p.i] != '\r') {
			break
		}
		p.newline()
		breaks++
	}
	if *indent == 0 {
		*indent = max(maxIndent, parent+1, 1)
	}
	return breaks
}
