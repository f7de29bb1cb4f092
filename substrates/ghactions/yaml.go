package ghactions

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/substrates"
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
	// quoted are the strings quoted so far (emitter.quote), blocks the literal blocks written
	// (emitter.block), quotedBytes the size of both.
	quoted      map[string]string
	blocks      map[blockKey]string
	quotedBytes int
	// sharedMaps and sharedSeqs are the subtrees the compile shares between workflows
	// (emitter.share), by their first element, with the text each was rendered as so far.
	sharedMaps map[*kv]*renders
	sharedSeqs map[*any]*renders
	// noReuse renders every subtree anew, shared or not: what the reused text must equal.
	noReuse bool
	// slab holds the documents rendered so far (emitter.document); its free end is the next's.
	slab []byte
}

// renders are the texts a shared subtree of n elements was rendered as, by place.
type renders struct {
	n  int
	at []rendered
}

// rendered is a shared subtree's text at one place: as a value or a sequence item, at depth.
type rendered struct {
	depth int
	item  bool
	text  string
}

// share marks v, a mapping or a seq that many workflows of the compile hold as it is (a step, a
// job's env, a job's steps), as read-only from now on. The emitter renders it
// once for each place it appears in (its depth, as a value or a sequence item) and copies that
// text after: most of a fleet's workflow bytes are the same steps. An empty v is not shared.
func (e *emitter) share(v any) {
	switch v := v.(type) {
	case mapping:
		if len(v) > 0 {
			if e.sharedMaps == nil {
				e.sharedMaps = map[*kv]*renders{}
			}
			if r := e.sharedMaps[&v[0]]; r == nil || r.n != len(v) {
				e.sharedMaps[&v[0]] = &renders{n: len(v)}
			}
		}
	case seq:
		if len(v) > 0 {
			if e.sharedSeqs == nil {
				e.sharedSeqs = map[*any]*renders{}
			}
			if r := e.sharedSeqs[&v[0]]; r == nil || r.n != len(v) {
				e.sharedSeqs[&v[0]] = &renders{n: len(v)}
			}
		}
	default:
		panic("ghactions: only a mapping or a seq is shared") // a bug in this package
	}
}

// sharedMap is m, marked shared (emitter.share).
func (e *emitter) sharedMap(m mapping) mapping {
	e.share(m)
	return m
}

// sharedSeq is s, marked shared (emitter.share).
func (e *emitter) sharedSeq(s seq) seq {
	e.share(s)
	return s
}

// renders are the texts of v so far when v is a shared subtree, else nil.
func (e *emitter) renders(v any) *renders {
	if e.noReuse {
		return nil
	}
	var r *renders
	switch v := v.(type) {
	case mapping:
		if len(v) == 0 || e.sharedMaps == nil {
			return nil
		}
		r = e.sharedMaps[&v[0]]
	case seq:
		if len(v) == 0 || e.sharedSeqs == nil {
			return nil
		}
		r = e.sharedSeqs[&v[0]]
	default:
		return nil
	}
	if r == nil || r.n != lenOf(v) {
		return nil // a part of a shared subtree, sliced: not what was shared
	}
	return r
}

// lenOf is the number of elements of a mapping or a seq.
func lenOf(v any) int {
	if m, ok := v.(mapping); ok {
		return len(m)
	}
	return len(v.(seq))
}

// reuse writes v at its place from the text it was rendered as there before, or renders it with
// render and keeps the text (within quotedBudget). It reports whether v is shared; when it is
// not, it writes nothing.
func (e *emitter) reuse(v any, depth int, item bool, render func()) bool {
	r := e.renders(v)
	if r == nil {
		return false
	}
	for _, t := range r.at {
		if t.depth == depth && t.item == item {
			e.b.WriteString(t.text)
			return true
		}
	}
	start := e.b.Len()
	render()
	if text := e.b.Bytes()[start:]; e.quotedBytes+len(text) <= quotedBudget {
		r.at = append(r.at, rendered{depth: depth, item: item, text: string(text)})
		e.quotedBytes += len(text)
	}
	return true
}

func (e *emitter) indent(n int) {
	for i := 0; i < n; i++ {
		e.b.WriteString("  ")
	}
}

// document renders the workflow wf where its file keeps it: after substrates.HeaderRoom free
// bytes, in the free end of a slab shared by the workflows rendered before it (a fleet's are
// tens of megabytes, written once, never copied). The slice returned (room, then the body) is
// its file's alone.
func (e *emitter) document(wf mapping) []byte {
	if cap(e.slab)-len(e.slab) < slabFree {
		e.slab = make([]byte, 0, slabSize)
	}
	start := len(e.slab)
	room := e.slab[start : start+substrates.HeaderRoom]
	e.b = *bytes.NewBuffer(room)
	e.mappingBody(wf, 0)
	doc := e.b.Bytes()
	e.b = bytes.Buffer{}
	if &doc[0] == &room[0] {
		e.slab = e.slab[:start+len(doc)]
	} else {
		// Larger than the slab's free end: the buffer grew out of it, and keeps the document.
		e.slab = nil
	}
	return doc[:len(doc):len(doc)]
}

// slabSize is a slab's size, and slabFree the free end a slab must have left to start a
// document in it (most workflows are under 20 KB).
const (
	slabSize = 4 << 20
	slabFree = 64 << 10
)

// mappingBody writes the entries of m at indentation depth.
func (e *emitter) mappingBody(m mapping, depth int) {
	for _, it := range m {
		e.indent(depth)
		e.key(it.key, depth)
		e.value(it.value, depth, it.comment)
	}
}

// maxImplicitKey is the longest key written as `key:`. YAML limits an implicit key to 1024
// characters; a longer one (only ever from a profile's event config) is written as an explicit
// `? key` then `:` on the next line, at depth.
const maxImplicitKey = 1000

// key writes a mapping key and its colon; the key starts at indentation depth.
func (e *emitter) key(k string, depth int) {
	if k == "on" {
		// GitHub documents the trigger key unquoted, and its parser reads it as a string.
		e.b.WriteString("on:")
		return
	}
	q := e.quote(k)
	if len(q) > maxImplicitKey {
		e.b.WriteString("? ")
		e.b.WriteString(q)
		e.b.WriteByte('\n')
		e.indent(depth)
	} else {
		e.b.WriteString(q)
	}
	e.b.WriteByte(':')
}

// value writes v after "key:" or "- ", at depth (the depth of its key).
func (e *emitter) value(v any, depth int, comment string) {
	if !e.reuse(v, depth, false, func() { e.render(v, depth, comment) }) {
		e.render(v, depth, comment)
	}
}

// render is value, writing v anew.
func (e *emitter) render(v any, depth int, comment string) {
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
			if !e.reuse(item, depth, true, func() { e.item(item, depth) }) {
				e.item(item, depth)
			}
		}
	case literal:
		e.b.WriteString(" |\n")
		e.b.WriteString(e.block(string(v), depth+1))
	case *yaml.Node:
		e.node(v, depth)
	default:
		e.b.WriteByte(' ')
		if s, ok := v.(string); ok {
			e.b.WriteString(e.quote(s))
		} else {
			e.b.WriteString(scalar(v))
		}
		if comment != "" {
			e.b.WriteString(" # ")
			e.b.WriteString(comment)
		}
		e.b.WriteByte('\n')
	}
}

// item writes v as an item of a block sequence whose key is at depth.
func (e *emitter) item(v any, depth int) {
	e.indent(depth + 1)
	e.b.WriteString("-")
	if m, ok := v.(mapping); ok && len(m) > 0 {
		// The first entry shares the dash's line.
		e.b.WriteByte(' ')
		e.key(m[0].key, depth+2)
		e.value(m[0].value, depth+2, m[0].comment)
		e.mappingBody(m[1:], depth+2)
		return
	}
	e.value(v, depth+1, "")
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

// flowUnsafe are the characters that end or change a plain scalar inside [ ] (flow context has
// more indicators than block context: "A?" reads fine as a value but breaks "[A?]"). An item
// holding one is written in block style instead.
const flowUnsafe = ",[]{}?:#"

// flowSeq renders a short list of plain-safe strings in flow style, as people write filters.
func flowSeq(s seq) (string, bool) {
	var b strings.Builder
	b.WriteByte('[')
	for i, item := range s {
		var text string
		switch v := item.(type) {
		case string:
			if !plainSafe(v) || strings.ContainsAny(v, flowUnsafe) {
				return "", false
			}
			text = v
		case plain:
			if strings.ContainsAny(string(v), flowUnsafe) {
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

// quote is the package's quote, remembered: a fleet's workflows repeat the same keys, values and
// scripts thousands of times. The emitter lives for one compile and keeps at most quotedBudget
// bytes of strings.
func (e *emitter) quote(s string) string {
	if word(s) {
		return s // plain, known without a look-up: most keys and many values
	}
	if q, ok := e.quoted[s]; ok {
		return q
	}
	q := quote(s)
	if e.quoted == nil {
		e.quoted = map[string]string{}
	}
	if e.quotedBytes+len(s)+len(q) <= quotedBudget {
		e.quoted[s] = q
		e.quotedBytes += len(s) + len(q)
	}
	return q
}

// block is the body of a literal block scalar of s at indentation depth: each line of s
// indented, an empty line left empty. It is remembered like quote's strings: the same run
// scripts recur in every workflow of a fleet.
func (e *emitter) block(s string, depth int) string {
	k := blockKey{s, depth}
	if b, ok := e.blocks[k]; ok {
		return b
	}
	var b strings.Builder
	b.Grow(len(s) + 2*depth*(strings.Count(s, "\n")+1) + 1)
	for line := range strings.Lines(strings.TrimSuffix(s, "\n") + "\n") {
		if line != "\n" {
			for range depth {
				b.WriteString("  ")
			}
		}
		b.WriteString(line)
	}
	text := b.String()
	if e.blocks == nil {
		e.blocks = map[blockKey]string{}
	}
	if e.quotedBytes+len(s)+len(text) <= quotedBudget {
		e.blocks[k] = text
		e.quotedBytes += len(s) + len(text)
	}
	return text
}

// blockKey is a literal block scalar's text and indentation depth.
type blockKey struct {
	text  string
	depth int
}

// quotedBudget bounds the bytes emitter.quote and emitter.block keep.
const quotedBudget = 8 << 20

// quote writes s as a YAML string: plain when that provably reads back as the same string,
// double-quoted otherwise.
func quote(s string) string {
	if plainSafe(s) {
		return s
	}
	// Go's escapes are a subset of YAML's double-quoted escapes (\a \b \t \n \v \f \r \" \\
	// \uXXXX \UXXXXXXXX), and strconv.Quote escapes every rune Go does not print, which covers
	// every character YAML does not allow or would fold (controls, NEL, U+2028, U+FEFF, NBSP).
	// Strings here come from YAML or from this package, so they are valid UTF-8 and Go's \xNN
	// (an invalid byte) never appears.
	return strconv.Quote(s)
}

// word reports whether s is ASCII letters, digits, '-' and '_', starting with a letter, and is
// not a word some YAML reader takes for a boolean or null: a plain scalar plainSafe accepts,
// told without its resolver (yaml.v3's looks further only at a word starting with one of
// resolveHinted's letters, and finds none longer than five bytes) or the emitter's cache.
func word(s string) bool {
	if s == "" || len(s) <= 5 && strings.IndexByte(resolveHinted, s[0]) >= 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '-' || c == '_')) {
			return false
		}
	}
	return true
}

// plainSafe reports whether s can be written as a plain scalar, in block context, and read back
// as the same string, by yaml.v3 and by any YAML 1.1 or 1.2 parser. Two checks, both needed:
// the syntax (nothing in s ends or escapes the scalar, at any position, ASCII or not) and the
// type (yaml.v3's own resolver says a plain s is a string, not a number, a boolean, null or a
// merge key; YAML 1.1 spellings of those are refused too).
func plainSafe(s string) bool {
	n := len(s)
	if n == 0 || s[0] == ' ' || s[n-1] == ' ' {
		return false
	}
	switch s[0] {
	case '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	case '-':
		if n == 1 || s[1] == ' ' || strings.HasPrefix(s, "---") {
			return false
		}
	case '.':
		if strings.HasPrefix(s, "...") {
			return false // a document end marker when it starts a line (a top-level key)
		}
	}
	for i, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			return false // a control, a tab or a line break
		case r >= 0x80 && (r == 0xfeff || !unicode.IsPrint(r)):
			return false // a break, a space or a control outside ASCII
		case r == ':' && (i == n-1 || s[i+1] == ' '):
			return false // ": " starts a mapping value, a final ':' too
		case r == '#' && i > 0 && s[i-1] == ' ':
			return false // " #" starts a comment
		}
	}
	if n <= 5 {
		// YAML 1.1 booleans and the merge and value keys: yaml.v3 reads some as strings, other
		// readers do not.
		for _, k := range [...]string{"true", "false", "yes", "no", "y", "n", "on", "off", "null", "~", "<<", "="} {
			if strings.EqualFold(s, k) {
				return false
			}
		}
	}
	if startsLikeNumber(s) {
		return false // a number, a timestamp, .inf or .nan in some YAML version
	}
	// The authority: how yaml.v3 resolves the plain scalar. Its resolver looks only at a scalar
	// whose first byte it has a hint for (resolveHinted); any other is a string at once, so the
	// resolver, which allocates on every call, is asked only about those.
	if strings.IndexByte(resolveHinted, s[0]) < 0 {
		return true
	}
	return (&yaml.Node{Kind: yaml.ScalarNode, Value: s}).ShortTag() == "!!str"
}

// resolveHinted are the first bytes yaml.v3's resolver looks further at (its resolveTable): a
// sign, a digit, a dot, and the first letters of its booleans and null. TestResolveHinted
// checks every other byte against the resolver itself.
const resolveHinted = "+-.0123456789yYnNtTfFoO~"

// startsLikeNumber reports whether s could be read as a number (of any base, with _ separators),
// a YAML 1.1 sexagesimal or a timestamp by some YAML version: a sign, a dot or a digit, then a
// digit or _; or .inf/.nan with any signs.
func startsLikeNumber(s string) bool {
	i := 0
	for i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	rest := s[i:]
	if i > 1 {
		return true // "--x", "+-1": never a number, but not worth the risk either
	}
	if strings.EqualFold(rest, ".inf") || strings.EqualFold(rest, ".nan") {
		return true
	}
	rest = strings.TrimPrefix(rest, ".")
	if rest == "" {
		return s != "-"
	}
	c := rest[0]
	if len(rest) < len(s) {
		// After a sign or a dot, a digit or _ makes a number ("+_0" is 0 to yaml.v3).
		return c >= '0' && c <= '9' || c == '_'
	}
	return c >= '0' && c <= '9'
}
