package ir

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/runenames"
	"gopkg.in/yaml.v3"
)

// maxPlainKey is the longest implicit (plain or quoted, without `? `) key YAML accepts: the YAML
// 1.1 and 1.2 specs limit it to 1024 characters, and yaml.v3 then fails with a message about
// something else ("mapping values are not allowed", "did not find expected ','").
const maxPlainKey = 1024

// syntaxHints maps yaml.v3's syntax error messages to how to fix them. The first entry whose
// message is contained in the error wins.
var syntaxHints = []struct{ msg, hint string }{
	{"found unexpected end of stream", "a quoted string or a [ ] or { } is not closed: close it, or remove the stray quote"},
	{"did not find expected node content", "a value is missing, or a [ ] or { } is not closed"},
	{"did not find expected ',' or ']'", "separate the items of [ ] with commas and close it with ]"},
	{"did not find expected ',' or '}'", "separate the entries of { } with commas and close it with }"},
	{"mapping values are not allowed in this context", "a value holding \": \" must be quoted, e.g. key: \"a: b\"; or a key is indented under a value"},
	{"did not find expected key", "the keys of one mapping must start in the same column"},
	{"could not find expected ':'", "a key must be followed by \": \" and its value"},
	{"did not find expected '-' indicator", "the items of one list must start in the same column"},
	{"block sequence entries are not allowed in this context", "start the list on the next line, indented under its key, or write [a, b]"},
	{"found character that cannot start any token", "quote the value: a plain value cannot start with @, ` or %"},
	{"found unknown escape character", "in a double-quoted string write a backslash as \\\\, or use single quotes"},
	{"found undefined tag handle", "quote the value: a plain value cannot start with !"},
	{"did not find expected alphabetic or numeric character", "quote the value: a plain value cannot start with * or &"},
	{"found a tab character", "indent with spaces: YAML does not allow tabs"},
	{"did not find URI escaped octet", "quote the value: a plain value cannot start with !"},
	{"found unexpected ':'", "quote a value holding \":\""},
}

// syntaxHint returns the hint for a yaml.v3 syntax error message, or "".
func syntaxHint(msg string) string {
	for _, h := range syntaxHints {
		if strings.Contains(msg, h.msg) {
			return h.hint
		}
	}
	return ""
}

// nonPrintable returns the byte offset and the rune of the first character YAML does not allow
// (its printable set: tab, line breaks, and everything from space up but DEL, the C1 controls other
// than NEL, surrogates, U+FEFF after the start and U+FFFE/U+FFFF), or -1.
func nonPrintable(data []byte) (int, rune) {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			// Not UTF-8 at all: reported as an encoding error elsewhere.
		case r == '\t' || r == '\n' || r == '\r' || r == 0x85:
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0xfffe || r == 0xffff,
			r == 0xfeff && i > 0:
			return i, r
		}
		i += size
	}
	return -1, 0
}

// longKey returns the byte offset and length of the first implicit key longer than maxPlainKey,
// or -1. A key is the text before a `:` that ends a line or is followed by a space, back to the
// start of the line (after the indentation and any `- `) or to the `{`, `[` or `,` before it.
func longKey(data []byte) (int, int) {
	start := 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n', '{', '[', ',':
			start = i + 1
		case ':':
			if i+1 < len(data) && !bytes.ContainsRune([]byte(" \t\n\r,}]"), rune(data[i+1])) {
				continue
			}
			key := data[start:i]
			lead := len(key) - len(bytes.TrimLeft(key, " \t-"))
			key = bytes.TrimSpace(key[lead:])
			if n := utf8.RuneCount(key); n > maxPlainKey {
				return start + lead, n
			}
			start = i + 1
		}
	}
	return -1, 0
}

// codePoint describes a character for a message: U+0435 CYRILLIC SMALL LETTER IE.
func codePoint(r rune) string {
	name := runenames.Name(r)
	if name == "" || strings.HasPrefix(name, "<") {
		// Controls have no name of their own in the tables.
		name = "control character"
	}
	return fmt.Sprintf("U+%04X %s", r, name)
}

// oddRune describes the first character of s that is not printable ASCII, with its byte offset,
// or "" when there is none: a name that looks valid but is not shows why
// ("rеviewer" has U+0435 CYRILLIC SMALL LETTER IE at byte 1).
func oddRune(s string) string {
	for i, r := range s {
		if r < 0x20 || r > 0x7e {
			what := fmt.Sprintf("%s at byte %d", codePoint(r), i)
			if unicode.IsLetter(r) {
				what += ", not an ASCII letter"
			}
			return what
		}
	}
	return ""
}

// notClosed places an error caused by a bracket or a quote that is not closed (or closed by the
// wrong bracket) there, with its message and hint; false when the error is not about one.
func notClosed(data []byte, at Pos, msg string) (Pos, string, string, bool) {
	if p, m, h, ok := flowNotClosed(data, at, msg); ok {
		return p, m, h, true
	}
	if at.Line > 1 && !strings.Contains(msg, "found unexpected end of stream") {
		// A quote closed lines later: yaml.v3 reports what that makes of the lines between.
		if off, ok := unclosedQuote(data, at.Line); ok {
			return offsetPos(data, off), fmt.Sprintf("this %c is never closed", data[off]),
				fmt.Sprintf("close it on its line, or remove it: a quoted string runs on to the next %c, lines later", data[off]), true
		}
	}
	return at, "", "", false
}

// flowNotClosed places a "did not find expected ',' or ']'" (or '}') error at the closer that
// does not match its [ (or {), or at a [ (or {) that is never closed, with its message and hint;
// false when the error is not about one.
func flowNotClosed(data []byte, at Pos, msg string) (Pos, string, string, bool) {
	for _, f := range []struct{ msg, open, close, items string }{
		{"did not find expected ',' or ']'", "[", "]", "items"},
		{"did not find expected ',' or '}'", "{", "}", "entries"},
	} {
		if !strings.Contains(msg, f.msg) || len(data) > maxRefine {
			continue
		}
		if c, o, ok := mismatchedCloser(data, at.Line, f.open[0]); ok {
			op := offsetPos(data, o)
			return offsetPos(data, c), fmt.Sprintf("this %c does not close the %s at %d:%d", data[c], f.open, op.Line, op.Col),
				fmt.Sprintf("close the %s with %s", f.open, f.close), true
		}
		if p, ok := unclosedFlow(data, at.Line, f.open[0]); ok {
			return p, fmt.Sprintf("this %s is never closed", f.open), fmt.Sprintf("close it with %s, and separate its %s with commas", f.close, f.items), true
		}
	}
	return at, "", "", false
}

// mismatchedCloser finds a ] or } up to line upto that closes a collection opened by the other
// bracket, the innermost open one being an open ([ or {): [a} or {a: b]. It returns the offsets
// of the closer and of its opener, or false.
func mismatchedCloser(data []byte, upto int, open byte) (closer, opener int, ok bool) {
	s := flowScan{block: -1, doc: data, mismatch: -1}
	line, start := 1, 0
	for start < len(data) && line <= upto {
		end := bytes.IndexByte(data[start:], '\n')
		if end < 0 {
			end = len(data) - start
		}
		if !s.line(string(data[start:start+end]), start) && s.mismatch < 0 {
			return 0, 0, false
		}
		if s.mismatch >= 0 {
			return s.mismatch, s.mismatchOf, data[s.mismatchOf] == open
		}
		line, start = line+1, start+end+1
	}
	return 0, 0, false
}

// maxQuoteTries bounds the parses unclosedQuote makes: one per candidate quote, the nearest to
// the error first.
const maxQuoteTries = 4

// unclosedQuote finds a quoted value that opens on a line up to upto, is not closed on it, and is
// the cause of the syntax error reported at line upto: the document with the quote closed at the
// end of its line parses, or fails only after upto. A double-quoted string runs on to the next
// quote, lines later, and yaml.v3 reports whatever that makes of the rest ("mapping values are
// not allowed"). It returns the quote's offset, or false.
func unclosedQuote(data []byte, upto int) (int, bool) {
	if len(data) > maxRefine {
		return 0, false
	}
	type candidate struct{ quote, lineEnd int }
	var cands []candidate
	s := flowScan{block: -1}
	line, start := 1, 0
	for start < len(data) && line <= upto {
		end := bytes.IndexByte(data[start:], '\n')
		if end < 0 {
			end = len(data) - start
		}
		open := s.quote != 0
		if !s.line(string(data[start:start+end]), start) {
			break
		}
		if !open && s.quote != 0 {
			cands = append(cands, candidate{s.quoteAt, start + end})
		}
		line, start = line+1, start+end+1
	}
	for i := len(cands) - 1; i >= 0 && i >= len(cands)-maxQuoteTries; i-- {
		if c := cands[i]; closingFixes(data, c.lineEnd, data[c.quote], upto) {
			return c.quote, true
		}
	}
	return 0, false
}

// closingFixes reports whether data with quote inserted at offset at parses, or fails only after
// line upto.
func closingFixes(data []byte, at int, quote byte, upto int) bool {
	fixed := make([]byte, 0, len(data)+1)
	fixed = append(append(append(fixed, data[:at]...), quote), data[at:]...)
	var n yaml.Node
	err := yaml.Unmarshal(fixed, &n)
	if err == nil {
		return true
	}
	m := yamlErrLine().FindStringSubmatch(err.Error())
	if m == nil {
		return false
	}
	line, _ := strconv.Atoi(m[1])
	return line > upto
}

// unclosedFlow finds the flow collection a "did not find expected ',' or ']'" (or '}') error is
// about when it was never closed: yaml.v3 reports it where it gave up, a line or more after the
// bracket (at the next key, say), and the bracket is the place to fix. It returns the position of
// the innermost [ (open '[') or { (open '{') still open at the end of line upto that nothing
// after closes, or false when there is none or the scan is unsure.
func unclosedFlow(data []byte, upto int, open byte) (Pos, bool) {
	s := flowScan{block: -1}
	at, depth := -1, 0
	line, start := 1, 0
	for start < len(data) {
		end := bytes.IndexByte(data[start:], '\n')
		if end < 0 {
			end = len(data) - start
		}
		if !s.line(string(data[start:start+end]), start) {
			return Pos{}, false
		}
		if line == upto {
			if len(s.open) == 0 || data[s.open[len(s.open)-1]] != open {
				return Pos{}, false
			}
			at, depth = s.open[len(s.open)-1], len(s.open)
		}
		if at >= 0 && len(s.open) < depth {
			return Pos{}, false // closed after all: the error is inside it
		}
		line, start = line+1, start+end+1
	}
	if at < 0 {
		return Pos{}, false
	}
	return offsetPos(data, at), true
}

// flowScan follows the flow collections of a YAML document line by line, as far as a lexical
// scan can: quoted scalars, comments and block scalars are skipped.
type flowScan struct {
	open    []int // offsets of the brackets open, innermost last
	quote   byte  // the quote of a quoted scalar that continues on the next line, or 0
	quoteAt int   // the offset of that quote
	block   int   // while >= 0, the lines of a block scalar under a key of this indentation
	// With doc (the document) set, mismatch is the offset of the first ] or } that closes the
	// other bracket, and mismatchOf the offset of that bracket (mismatch < 0: none yet).
	doc                  []byte
	mismatch, mismatchOf int
}

// line scans one line starting at offset start of the document; false when unsure.
func (s *flowScan) line(text string, start int) bool {
	indent := len(text) - len(strings.TrimLeft(text, " "))
	if s.block >= 0 {
		if strings.TrimSpace(text) == "" || indent > s.block {
			return true
		}
		s.block = -1
	}
	i := 0
	if len(s.open) == 0 && s.quote == 0 {
		if i = valueStart(text); i < 0 {
			return true
		}
		switch text[i] {
		case '|', '>':
			s.block = indent
			return true
		case '[', '{', '"', '\'':
		default:
			return true // a plain scalar
		}
	}
	return s.flow(text, i, start)
}

// flow scans text from i in flow context (or a quoted scalar).
func (s *flowScan) flow(text string, i, start int) bool {
	for ; i < len(text); i++ {
		c := text[i]
		if s.quote != 0 {
			switch {
			case c == '\\' && s.quote == '"':
				i++
			case c == s.quote && s.quote == '\'' && i+1 < len(text) && text[i+1] == '\'':
				i++
			case c == s.quote:
				s.quote = 0
				if len(s.open) == 0 {
					return true // a quoted value at block level: the rest is not flow
				}
			}
			continue
		}
		switch c {
		case '#':
			if i == 0 || text[i-1] == ' ' || text[i-1] == '\t' {
				return true
			}
		case '[', '{':
			s.open = append(s.open, start+i)
		case ']', '}':
			if len(s.open) == 0 {
				return false
			}
			if o := s.open[len(s.open)-1]; s.doc != nil && s.mismatch < 0 && s.doc[o] != c-2 { // '['+2 == ']', '{'+2 == '}'
				s.mismatch, s.mismatchOf = start+i, o
				return false
			}
			s.open = s.open[:len(s.open)-1]
			if len(s.open) == 0 {
				return true
			}
		case '"', '\'':
			if i == 0 || strings.IndexByte(" \t[{,:", text[i-1]) >= 0 {
				s.quote, s.quoteAt = c, start+i
			}
		}
	}
	return true
}

// valueStart returns the index in a block-context line of its value (after any "- " and
// "key: "), or -1 when the line holds no value that could open a flow collection.
func valueStart(text string) int {
	i := len(text) - len(strings.TrimLeft(text, " "))
	for strings.HasPrefix(text[i:], "- ") {
		i += 2
		for i < len(text) && text[i] == ' ' {
			i++
		}
	}
	if i >= len(text) || text[i] == '#' {
		return -1
	}
	if strings.IndexByte("[{\"'|>", text[i]) >= 0 {
		return i
	}
	rest := text[i:]
	if c := strings.Index(rest, " #"); c >= 0 {
		rest = rest[:c]
	}
	k := strings.Index(rest, ": ")
	if k < 0 {
		return -1
	}
	i += k + 2
	for i < len(text) && text[i] == ' ' {
		i++
	}
	if i >= len(text) {
		return -1
	}
	return i
}

// maxQuotedExample bounds the value colonInPlain quotes in its hint: a longer one is not repeated.
const maxQuotedExample = 80

// colonInPlain places a "mapping values are not allowed in this context" error caused by a ": "
// (or a ":" ending the line) inside an unquoted value, `shell: git commit -m "fix: typo"`, at
// that colon, with the value quoted as the fix; false when the error is not about one. yaml.v3
// reports the line only, and reads the colon as the start of a key that cannot be there.
func colonInPlain(data []byte, at Pos, msg string) (Pos, string, string, bool) {
	if !strings.Contains(msg, "mapping values are not allowed in this context") {
		return at, "", "", false
	}
	text := lineText(data, at.Line)
	i := valueStart(text)
	if i < 0 || strings.IndexByte("[{\"'|>!&*#", text[i]) >= 0 || !strings.Contains(text[:i], ": ") {
		return at, "", "", false
	}
	value := text[i:]
	if c := strings.Index(value, " #"); c >= 0 {
		value = value[:c]
	}
	value = strings.TrimRight(value, " \t\r")
	c := strings.Index(value, ": ")
	if c < 0 && strings.HasSuffix(value, ":") {
		c = len(value) - 1
	}
	if c < 0 {
		return at, "", "", false
	}
	key := strings.TrimSpace(text[:i])
	key = strings.TrimSpace(strings.TrimSuffix(strings.TrimLeft(key, "- "), ":"))
	hint := "quote the value: put it in single quotes, writing a ' inside as ''"
	if len(value) <= maxQuotedExample && utf8.ValidString(value) {
		hint = fmt.Sprintf("quote the value: %s: '%s'", key, strings.ReplaceAll(value, "'", "''"))
	}
	what := `a ": " inside`
	if c == len(value)-1 {
		what = `a ":" ending`
	}
	return Pos{at.Line, i + c + 1}, fmt.Sprintf("%s the unquoted value of %s, which YAML reads as a key", what, key), hint, true
}
