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
	line, col := p.line, p.column(p.i)
	literal := p.s[p.i] == '|'
	p.i++
	chomping, increment := p.blockScalarHeader()
	indent := 0
	if increment > 0 {
		indent = increment
		if parent >= 0 {
			indent += parent
		}
	}
	text := p.blockScalarText(literal, chomping, indent, parent)
	style := yaml.LiteralStyle
	if !literal {
		style = yaml.FoldedStyle
	}
	n := p.node(yaml.ScalarNode, strTag, text, style, line, col)
	p.skipToContent()
	return n
}

// blockScalarHeader reads a block scalar's header after its indicator, up to and including the
// line break: chomping (-1 strip, 0 clip, 1 keep) and the indentation indicator (0 when absent)
// in either order, then an optional comment.
func (p *parser) blockScalarHeader() (chomping, increment int) {
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
		if p.s[p.i-1] != ' ' {
			p.bail()
		}
		p.skipComment()
	default:
		p.bail()
	}
	p.newline()
	return chomping, increment
}

// blockScalarText reads a block scalar's content lines, the header already read, and returns
// its value folded (unless literal) and chomped. indent is 0 when the header gave none.
func (p *parser) blockScalarText(literal bool, chomping, indent, parent int) string {
	s := p.s
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
	return b.String()
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
