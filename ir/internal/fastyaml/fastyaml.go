// Package fastyaml is a fast path for decoding the common, block-style subset of YAML into the
// node tree gopkg.in/yaml.v3 would build.
//
// Profiles are decoded into yaml.Node so that later diagnostics can point at lines and columns,
// but yaml.v3's general-purpose parser is several times too slow, and allocates too much, for
// large profiles. Parse recognises a deliberately small subset of YAML (block mappings and
// sequences, single-line plain and quoted scalars, literal and folded block scalars, single-line
// flow collections, comments) and builds exactly the tree yaml.v3 builds for it, positions
// included.
//
// The contract is one-sided: when Parse reports ok, its tree is the one yaml.v3 would return;
// when the input strays outside the subset, or merely looks malformed, Parse reports !ok without
// guessing, and the caller must decode the input with yaml.v3, which stays the authority on both
// results and error messages. Parse therefore never reproduces yaml.v3's errors, only its
// successes, and every construct it is unsure about is left to yaml.v3.
package fastyaml

import (
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

const (
	// maxDepth keeps nesting far below yaml.v3's own limit of 10000, so that inputs yaml.v3
	// rejects for depth are never accepted here and recursion stays shallow.
	maxDepth = 1000

	// maxKeyLen keeps keys clear of libyaml's rule that a simple key may not span more than
	// 1024 characters. Spans are measured in bytes, which never undercount characters.
	maxKeyLen = 1000

	// maxNodeChunk and contentChunk size the slabs nodes and Content slices are carved from:
	// large enough to make allocation counts negligible, small enough that the unused tail of
	// the last slab does not matter.
	maxNodeChunk = 2048
	contentChunk = 4096
)

// Tags yaml.v3 assigns to untagged nodes.
const (
	nullTag      = "!!null"
	boolTag      = "!!bool"
	strTag       = "!!str"
	intTag       = "!!int"
	floatTag     = "!!float"
	timestampTag = "!!timestamp"
	seqTag       = "!!seq"
	mapTag       = "!!map"
)

// bailout is the panic value that abandons the fast path from deep inside the recursive
// descent; Parse recovers it and reports !ok. Any other panic is a bug and is not hidden.
type bailout struct{}

// Parse parses data when it lies inside the supported subset of YAML. ok=false means that data
// is outside the subset or malformed, and that the caller must use yaml.v3 instead, which then
// gives the authoritative result or error.
//
// When ok is true, doc equals the node yaml.v3 produces for
//
//	var n yaml.Node; yaml.Unmarshal(data, &n)
//
// compared on Kind, Tag, Value, Style, Line, Column and Content recursively. Comments are not
// recorded, and Anchor and Alias are always empty since inputs using them are rejected.
//
// Parse runs in time linear in len(data) and never panics.
func Parse(data []byte) (doc *yaml.Node, ok bool) {
	ascii, valid := checkChars(data)
	if !valid {
		return nil, false
	}
	p := parser{s: string(data), line: 1, ascii: ascii}
	defer func() {
		if r := recover(); r != nil {
			if _, isBailout := r.(bailout); !isBailout {
				panic(r)
			}
			doc, ok = nil, false
		}
	}()
	return p.document(), true
}

// checkChars reports whether data holds only characters that the fast path can scan and
// position exactly as yaml.v3 does. It rejects what yaml.v3's reader refuses (invalid UTF-8,
// control characters), byte order marks, a '\r' outside "\r\n", and the Unicode line breaks
// NEL, LS and PS, which yaml.v3 counts as new lines. ascii reports whether byte offsets can
// stand in for yaml.v3's character-based columns.
func checkChars(data []byte) (ascii, ok bool) {
	ascii = true
	for i := 0; i < len(data); {
		for i < len(data) && acceptedASCII[data[i]] {
			i++
		}
		if i == len(data) {
			break
		}
		c := data[i]
		if c < utf8.RuneSelf {
			if c != '\r' || i+1 == len(data) || data[i+1] != '\n' {
				return false, false
			}
			i += 2
			continue
		}
		ascii = false
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size == 1,
			r < 0xA0, r == 0x2028, r == 0x2029, r == 0xFEFF, r == 0xFFFE, r == 0xFFFF:
			return false, false
		}
		i += size
	}
	return ascii, true
}

// acceptedASCII marks the ASCII characters checkChars accepts on their own: printable ones, tab and
// line feed.
var acceptedASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	t['\t'], t['\n'] = true, true
	return t
}()

// parser holds the state of one Parse call. Scanning works on offsets into s: node values are
// substrings of it, so the input is copied once instead of once per scalar.
type parser struct {
	s         string
	i         int // current offset in s
	line      int // 1-based line of offset i
	lineStart int // offset of the first byte of that line
	ind       int // indentation of the current content line, -1 at the end of the input
	depth     int

	// yaml.v3 counts columns in characters. For non-ASCII input a running count along the
	// current line is kept, moving only forward, so computing columns stays linear overall.
	ascii         bool
	colLineStart  int
	colPos, colCh int

	nodes     []yaml.Node  // slab the next nodes are carved from
	nodeChunk int          // size of the last node slab, grown up to maxNodeChunk
	kids      []*yaml.Node // children of the collections being parsed, innermost last
	content   []*yaml.Node // slab Content slices are carved from
}

// bail abandons the fast path.
func (p *parser) bail() {
	panic(bailout{})
}

// enter and leave bound the nesting depth of collections.
func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.bail()
	}
}

func (p *parser) leave() {
	p.depth--
}

// column returns yaml.v3's 1-based column for offset i of the current line.
func (p *parser) column(i int) int {
	if p.ascii {
		return i - p.lineStart + 1
	}
	if p.colLineStart != p.lineStart || i < p.colPos {
		p.colLineStart, p.colPos, p.colCh = p.lineStart, p.lineStart, 0
	}
	for ; p.colPos < i; p.colPos++ {
		if p.s[p.colPos]&0xC0 != 0x80 {
			p.colCh++
		}
	}
	return p.colCh + 1
}

// node allocates a node from the current slab.
func (p *parser) node(kind yaml.Kind, tag, value string, style yaml.Style, line, col int) *yaml.Node {
	if len(p.nodes) == cap(p.nodes) {
		p.nodeChunk = min(2*p.nodeChunk+16, maxNodeChunk)
		p.nodes = make([]yaml.Node, 0, p.nodeChunk)
	}
	// Fields are set one by one on the zeroed slot: copying a whole yaml.Node into the slab
	// costs a bulk write barrier whenever the GC is running, which it does for large inputs.
	p.nodes = p.nodes[:len(p.nodes)+1]
	n := &p.nodes[len(p.nodes)-1]
	n.Kind, n.Style, n.Tag, n.Value, n.Line, n.Column = kind, style, tag, value, line, col
	return n
}

// null returns the empty scalar yaml.v3 creates for a missing value, positioned where yaml.v3
// puts it: just after the ':' or '-' indicator.
func (p *parser) null(line, col int) *yaml.Node {
	return p.node(yaml.ScalarNode, nullTag, "", 0, line, col)
}

// collect moves the children pushed on p.kids since base into n.Content. The slice is carved
// from a shared slab with its capacity clipped, so that appending to one node's Content can
// never overwrite another's.
func (p *parser) collect(n *yaml.Node, base int) {
	k := len(p.kids) - base
	if k == 0 {
		return
	}
	if cap(p.content)-len(p.content) < k {
		p.content = make([]*yaml.Node, 0, max(k, contentChunk))
	}
	off := len(p.content)
	p.content = append(p.content, p.kids[base:]...)
	n.Content = p.content[off : off+k : off+k]
	p.kids = p.kids[:base]
}
