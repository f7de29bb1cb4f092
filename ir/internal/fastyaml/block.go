package fastyaml

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// The block structure is parsed line by line. After each node the parser moves to the first
// token of the next content line and records its indentation in p.ind; every collection then
// decides from p.ind alone whether the line continues it (same indentation), closes it (less)
// or is something the subset does not cover (more). That last rule also rejects multi-line
// plain scalars: libyaml continues a plain scalar exactly when the next line is indented more
// than the enclosing block collection.

// document parses the whole input as a single document.
func (p *parser) document() *yaml.Node {
	p.skipToContent()
	if p.ind < 0 {
		// Empty and comment-only documents decode to nodes with no content; leave them to yaml.v3.
		p.bail()
	}
	doc := p.node(yaml.DocumentNode, "", "", 0, p.line, p.column(p.i))
	root := p.blockNode(-1)
	if p.ind >= 0 {
		// Content after the root node: a second document, a dedented line, or an error.
		p.bail()
	}
	p.kids = append(p.kids, root)
	p.collect(doc, 0)
	return doc
}

// blockNode parses the node whose first token is at p.i, which is either the first token on
// its line or follows "- " indicators, so that p.i-p.lineStart is also its indentation. parent
// is the indentation of the enclosing block collection, -1 at the root.
func (p *parser) blockNode(parent int) *yaml.Node {
	p.enter()
	defer p.leave()
	n := p.i - p.lineStart
	switch p.peek() {
	case '-':
		if p.isEntry() {
			return p.blockSeq(n, false)
		}
	case '|', '>':
		return p.blockScalar(parent)
	}
	v, isKey := p.blockToken()
	if isKey {
		return p.blockMap(n, v)
	}
	p.endLine()
	return v
}

// blockSeq parses a block sequence whose first '-' is at p.i, in column n. An indentless
// sequence is the value of a mapping key in the same column n; it ends at the first line in
// that column that is not an entry, and the mapping carries on.
func (p *parser) blockSeq(n int, indentless bool) *yaml.Node {
	seq := p.node(yaml.SequenceNode, seqTag, "", 0, p.line, p.column(p.i))
	base := len(p.kids)
	for {
		p.i++ // the '-'
		line, col := p.line, p.column(p.i)
		p.skipSpaces()
		var item *yaml.Node
		if p.atLineEnd() {
			p.endLine()
			if p.ind > n {
				item = p.blockNode(n)
			} else {
				item = p.null(line, col)
			}
		} else {
			item = p.blockNode(n)
		}
		p.kids = append(p.kids, item)
		if p.ind < n {
			break
		}
		if p.ind > n {
			p.bail()
		}
		if !p.isEntry() {
			if indentless {
				break
			}
			p.bail()
		}
	}
	p.collect(seq, base)
	return seq
}

// blockMap parses a block mapping in column n whose first key has been scanned, leaving p.i
// just after the key's ':'.
func (p *parser) blockMap(n int, key *yaml.Node) *yaml.Node {
	m := p.node(yaml.MappingNode, mapTag, "", 0, key.Line, key.Column)
	base := len(p.kids)
	for {
		line, col := p.line, p.column(p.i)
		p.skipSpaces()
		var val *yaml.Node
		if p.atLineEnd() {
			p.endLine()
			switch {
			case p.ind > n:
				val = p.blockNode(n)
			case p.ind == n && p.isEntry():
				val = p.blockSeq(n, true)
			default:
				val = p.null(line, col)
			}
		} else if c := p.peek(); c == '|' || c == '>' {
			val = p.blockScalar(n)
		} else {
			var isKey bool
			if val, isKey = p.blockToken(); isKey {
				// "key: value: other", which yaml.v3 rejects.
				p.bail()
			}
			p.endLine()
		}
		p.kids = append(p.kids, key, val)
		if p.ind < n {
			break
		}
		if p.ind > n {
			p.bail()
		}
		var isKey bool
		if key, isKey = p.blockToken(); !isKey {
			p.bail()
		}
	}
	p.collect(m, base)
	return m
}

// blockToken scans the single-line scalar or flow collection at p.i in block context and
// reports whether it is a mapping key, that is a scalar followed by ':' and a blank. p.i ends
// just past the ':' of a key, or else just past the node.
func (p *parser) blockToken() (n *yaml.Node, isKey bool) {
	start := p.i
	switch p.peek() {
	case '[', '{':
		// Flow collections as keys are outside the subset; endLine rejects a ':' after one.
		return p.flowNode(), false
	case '"', '\'':
		n = p.quoted()
	default:
		n = p.plain(false)
	}
	j := p.i
	for j < len(p.s) && p.s[j] == ' ' {
		j++
	}
	if j < len(p.s) && p.s[j] == ':' && blankz(p.s, j+1) {
		if j-start > maxKeyLen {
			p.bail()
		}
		p.i = j + 1
		return n, true
	}
	return n, false
}

// isEntry reports whether p.i is at a block sequence entry indicator.
func (p *parser) isEntry() bool {
	return p.peek() == '-' && blankz(p.s, p.i+1)
}

// peek returns the byte at p.i, or 0 at the end of the input.
func (p *parser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *parser) skipSpaces() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

// atLineEnd reports whether nothing but a comment is left on the line after blanks.
func (p *parser) atLineEnd() bool {
	switch p.peek() {
	case 0, '\n', '\r', '#':
		return true
	}
	return false
}

// endLine consumes what follows the last token on a line, spaces and an optional comment, and
// moves to the next content line.
func (p *parser) endLine() {
	p.skipSpaces()
	switch p.peek() {
	case 0, '\n', '\r':
	case '#':
		if p.s[p.i-1] != ' ' {
			// libyaml takes "]#" or "\"#" as the start of a comment; stay on the safe side.
			p.bail()
		}
		p.skipComment()
	default:
		p.bail()
	}
	p.newline()
	p.skipToContent()
}

// skipToContent moves from the start of a line to the first token of the next line that holds
// one, skipping blank and comment-only lines, and sets p.ind.
func (p *parser) skipToContent() {
	s := p.s
	for p.i < len(s) {
		p.skipSpaces()
		switch p.peek() {
		case 0, '\n', '\r':
		case '#':
			p.skipComment()
		case '\t':
			// Tabs in indentation are errors in YAML, and tabs elsewhere are rare enough in
			// profiles that the subset excludes them outside comments altogether.
			p.bail()
		default:
			p.ind = p.i - p.lineStart
			if p.ind == 0 && (strings.HasPrefix(s[p.i:], "---") || strings.HasPrefix(s[p.i:], "...")) && blankz(s, p.i+3) {
				// Document markers: explicit or multiple documents.
				p.bail()
			}
			return
		}
		p.newline()
	}
	p.ind = -1
}

// skipComment moves p.i from a '#' to the line break that ends the comment.
func (p *parser) skipComment() {
	k := strings.IndexByte(p.s[p.i:], '\n')
	if k < 0 {
		p.i = len(p.s)
		return
	}
	p.i += k
	if p.s[p.i-1] == '\r' {
		p.i--
	}
}

// newline consumes the line break at p.i, if any; checkChars guarantees that every '\r' is
// followed by '\n'.
func (p *parser) newline() {
	switch p.peek() {
	case '\r':
		p.i += 2
	case '\n':
		p.i++
	default:
		return
	}
	p.line++
	p.lineStart = p.i
}

// blankz reports whether s[i] is a blank, a line break, or the end of the input: the
// characters after which libyaml treats '-' and ':' as indicators.
func blankz(s string, i int) bool {
	if i >= len(s) {
		return true
	}
	switch s[i] {
	case ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
