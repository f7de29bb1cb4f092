// Package jsonschema checks JSON values against self-contained JSON Schemas: the result contracts,
// inline result schemas and step schemas of a profile. It reports every failure with the JSON
// pointer of the failing value, the subschema whose keyword failed and the keyword, and reports
// every way a schema document is not one it can apply, each at its place in the document.
//
// It reads drafts 2020-12 (the default), 2019-09, 07 and 06, and applies their assertion and
// applicator keywords except unevaluatedProperties, unevaluatedItems and the dynamic and
// recursive references, which it refuses by name rather than ignore. A $ref refers inside its
// document only (a JSON pointer or an $anchor): nothing is read from a file or the network. format
// and the content keywords are annotations, as draft 2020-12 has them by default; a keyword applies
// only in the drafts that define it. Numbers are exact: a literal beyond MaxExponent or MaxDigits
// is refused by Decode and fails every keyword that reads its value, never passes one. Package
// initialization does no work: a process that never checks a schema pays nothing for it.
package jsonschema

import (
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"strings"
)

// Limits on a schema document, so that a hostile one is refused rather than run.
const (
	// MaxDepth is how deeply subschemas may nest.
	MaxDepth = 128
	// MaxSteps is how many subschema applications one Validate may make before it gives up:
	// nested anyOf and $ref can make a small schema exponentially costly.
	MaxSteps = 1 << 20
)

// Schema is a compiled schema, ready to validate values; it may be used concurrently.
type Schema struct {
	root *node
}

// Error is one failure: of a value against a schema (Validate), or of a schema document
// (Compile), where InstanceLocation is inside the schema document.
type Error struct {
	// InstanceLocation holds the JSON pointer tokens of the failing value (none: the top level).
	InstanceLocation []string
	// SchemaLocation is the JSON pointer, in the schema document, of the subschema whose keyword
	// failed ("" for the root).
	SchemaLocation string
	// Keyword is the keyword that failed: "type", "enum", "required", "false" for a false schema.
	Keyword string
	// Want is what the keyword allows, for type ([]string), enum ([]any) and const; Got is the
	// value found.
	Want, Got any
	// Message says what failed, e.g. "got string, want integer".
	Message string
}

// ValidationError lists every way a value fails its schema.
type ValidationError struct{ Errors []*Error }

// SchemaError lists every way a schema document is not a schema this package applies.
type SchemaError struct{ Errors []*Error }

// Error lists the failures, "at /pointer: message" each, separated by "; ".
func (e *ValidationError) Error() string { return joinErrors(e.Errors) }

// Error lists the schema's problems, "at /pointer: message" each, separated by "; ".
func (e *SchemaError) Error() string { return "invalid JSON Schema: " + joinErrors(e.Errors) }

func joinErrors(errs []*Error) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = "at /" + strings.Join(e.InstanceLocation, "/") + ": " + e.Message
	}
	return strings.Join(parts, "; ")
}

// node is one compiled subschema.
type node struct {
	loc    string // its JSON pointer in the document
	always *bool  // a boolean schema

	types    []string
	enum     []any
	hasEnum  bool
	constant any
	hasConst bool
	// constRat and enumRats are the exact values of const and of enum's members, nil for a
	// value that is no number.
	constRat *big.Rat
	enumRats []*big.Rat

	ref     string
	target  *node
	refOnly bool // before draft 2019-09, $ref's siblings are ignored

	minProps, maxProps, minItems, maxItems, minLen, maxLen, minContains, maxContains int

	minimum, maximum, exclMin, exclMax, multipleOf *big.Rat

	pattern      *regexp.Regexp
	required     []string
	depRequired  map[string][]string
	depSchemas   map[string]*node
	props        map[string]*node
	patternProps []patternProp
	additional   *node
	propNames    *node

	prefix          []*node
	items           *node
	additionalItems *node // before draft 2020-12: applied after a list of items only
	contains        *node
	unique          bool

	allOf, anyOf, oneOf []*node
	not, ifs, then, els *node
}

type patternProp struct {
	re *regexp.Regexp
	n  *node
}

// compiler builds the nodes of one document.
type compiler struct {
	draft   int
	nodes   map[string]*node
	anchors map[string]*node
	errs    []*Error
}

// Compile compiles a schema document: a JSON value (objects map[string]any, arrays []any,
// numbers json.Number or float64), as Decode returns or a YAML mapping converted. Every problem
// is reported in a *SchemaError.
func Compile(doc any) (*Schema, error) {
	c := &compiler{draft: 2020, nodes: map[string]*node{}, anchors: map[string]*node{}}
	if m, ok := doc.(map[string]any); ok {
		if s, ok := m["$schema"]; ok {
			c.dialect(s)
		}
	}
	root := c.compile(doc, nil)
	c.resolve()
	c.cycles(root)
	if len(c.errs) > 0 {
		return nil, &SchemaError{Errors: c.errs}
	}
	return &Schema{root: root}, nil
}

// draftOf names the draft of a $schema URI this package reads (0: none it reads), by the URI
// without its scheme and trailing "#".
func draftOf(uri string) int {
	u := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(uri, "https://"), "http://"), "#")
	switch u {
	case "json-schema.org/draft/2020-12/schema":
		return 2020
	case "json-schema.org/draft/2019-09/schema":
		return 2019
	case "json-schema.org/draft-07/schema":
		return 7
	case "json-schema.org/draft-06/schema":
		return 6
	}
	return 0
}

func (c *compiler) dialect(s any) {
	at := []string{"$schema"}
	uri, ok := s.(string)
	if !ok {
		c.typeErr(at, s, "string")
		return
	}
	if c.draft = draftOf(uri); c.draft == 0 {
		c.failf(at, "$schema %q is not a draft this validator reads: write https://json-schema.org/draft/2020-12/schema (draft 2019-09, 07 and 06 are read too)", uri)
	}
}

func (c *compiler) failf(at []string, format string, args ...any) {
	c.errs = append(c.errs, &Error{InstanceLocation: append([]string(nil), at...), Message: fmt.Sprintf(format, args...)})
}

func (c *compiler) typeErr(at []string, v any, want string) {
	got := typeOf(v)
	if got == "" {
		got = fmt.Sprintf("%T", v)
	}
	c.errs = append(c.errs, &Error{InstanceLocation: append([]string(nil), at...), Keyword: "type", Got: got, Want: want,
		Message: fmt.Sprintf("got %s, want %s", got, want)})
}

func pointer(at []string) string {
	var b strings.Builder
	for _, t := range at {
		b.WriteString("/" + escape(t))
	}
	return b.String()
}

// compile compiles the subschema v found at the tokens at.
func (c *compiler) compile(v any, at []string) *node {
	n := &node{loc: pointer(at), minProps: -1, maxProps: -1, minItems: -1, maxItems: -1, minLen: -1, maxLen: -1, minContains: -1, maxContains: -1}
	c.nodes[n.loc] = n
	if len(at) > MaxDepth {
		c.failf(at, "the schema nests deeper than %d levels", MaxDepth)
		return n
	}
	switch s := v.(type) {
	case bool:
		n.always = &s
	case map[string]any:
		for _, k := range sortedKeys(s) {
			c.keyword(n, k, s[k], append(at[:len(at):len(at)], k))
		}
		if n.ref != "" {
			n.refOnly = c.draft < 2019
		}
		if n.additionalItems != nil && len(n.prefix) > 0 {
			n.items = n.additionalItems
		}
	default:
		c.typeErr(at, v, "object or boolean")
	}
	return n
}

// keyword compiles one keyword of n.
func (c *compiler) keyword(n *node, k string, v any, at []string) {
	switch {
	case c.assertion(n, k, v, at), c.numeric(n, k, v, at), c.structural(n, k, v, at), c.applicator(n, k, v, at), c.core(n, k, v, at):
	}
}

// core compiles the identifiers, references and annotations.
func (c *compiler) core(n *node, k string, v any, at []string) bool {
	switch k {
	case "$schema":
		if len(at) > 1 {
			c.failf(at, "$schema is read at the top of the schema only: name the draft once, there")
		}
	case "$id":
		if len(at) > 1 {
			c.failf(at, "a nested $id is not supported: the schema is one document (define subschemas under $defs and refer to them with $ref: \"#/$defs/NAME\")")
		} else if _, ok := v.(string); !ok {
			c.typeErr(at, v, "string")
		}
	case "$ref":
		c.reference(n, v, at)
	case "$anchor":
		c.anchor(n, v, at)
	case "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor", "$vocabulary":
		c.failf(at, "%s is not supported by autonomy's JSON Schema validator (it applies type, enum, const, the numeric, string, array and object keywords, properties, patternProperties, additionalProperties, items, prefixItems, contains, allOf, anyOf, oneOf, not, if/then/else and $ref inside the schema): write it without %s, e.g. additionalProperties: false", k, k)
	case "title", "description", "$comment", "format", "contentMediaType", "contentEncoding":
		if _, ok := v.(string); !ok {
			c.typeErr(at, v, "string")
		}
	default:
		return false // an unknown keyword is an annotation, ignored as the drafts say
	}
	return true
}

func (c *compiler) reference(n *node, v any, at []string) {
	ref, ok := v.(string)
	if !ok {
		c.typeErr(at, v, "string")
		return
	}
	if !strings.HasPrefix(ref, "#") {
		c.failf(at, "$ref %q leaves the schema: it may not reference another document (nothing is read from a file or the network); refer inside it, e.g. $ref: \"#/$defs/NAME\"", ref)
		return
	}
	n.ref = ref
}

// anchorName is the form of an $anchor (draft 2020-12).
func anchorName(s string) bool {
	for i, r := range s {
		letter := r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r == '_'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '-' || r == '.')) {
			return false
		}
	}
	return s != ""
}

func (c *compiler) anchor(n *node, v any, at []string) {
	name, ok := v.(string)
	switch {
	case !ok:
		c.typeErr(at, v, "string")
	case !anchorName(name):
		c.failf(at, "$anchor %q is not a name: a letter or _ then letters, digits, -, _ or .", name)
	case c.anchors[name] != nil:
		c.failf(at, "$anchor %q is defined twice (first at %s)", name, c.anchors[name].loc)
	default:
		c.anchors[name] = n
	}
}

// resolve binds every $ref to the subschema it names.
func (c *compiler) resolve() {
	for _, loc := range sortedKeys(c.nodes) {
		n := c.nodes[loc]
		if n.ref == "" {
			continue
		}
		frag, err := url.PathUnescape(n.ref[1:])
		if err != nil {
			c.failf(append(tokens(n.loc), "$ref"), "$ref %q is not a valid URI fragment: %v", n.ref, err)
			continue
		}
		if frag == "" || strings.HasPrefix(frag, "/") {
			n.target = c.nodes[frag]
		} else {
			n.target = c.anchors[frag]
		}
		if n.target == nil {
			c.failf(append(tokens(n.loc), "$ref"), "$ref %q refers to no subschema of this schema (refer to the root \"#\", a subschema such as \"#/$defs/NAME\", or an $anchor)", n.ref)
		}
	}
}

// tokens splits a JSON pointer into its unescaped tokens.
func tokens(ptr string) []string {
	if ptr == "" {
		return nil
	}
	parts := strings.Split(ptr[1:], "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return parts
}

// inPlace lists the subschemas n applies to the very value it is applied to.
func (n *node) inPlace() []*node {
	out := []*node{n.target, n.not, n.ifs, n.then, n.els}
	out = append(out, n.allOf...)
	out = append(out, n.anyOf...)
	out = append(out, n.oneOf...)
	for _, k := range sortedKeys(n.depSchemas) {
		out = append(out, n.depSchemas[k])
	}
	return out
}

// cycles refuses a schema that applies itself to the same value without end ({"$ref": "#"}):
// a recursive schema must descend into the value (properties, items) before it recurs. The
// in-place edges other than $ref lead to subschemas nested in their node, so a cycle closes on a
// $ref.
func (c *compiler) cycles(root *node) {
	const visiting, done = 1, 2
	state := map[*node]int{}
	var walk func(n *node)
	walk = func(n *node) {
		state[n] = visiting
		for _, m := range n.inPlace() {
			switch {
			case m == nil:
			case state[m] == visiting:
				c.failf(append(tokens(n.loc), "$ref"), "$ref %q makes a cycle: it applies the schema to the same value again without end (descend into a property or item before referring back)", n.ref)
			case state[m] == 0:
				walk(m)
			}
		}
		state[n] = done
	}
	walk(root)
	for _, loc := range sortedKeys(c.nodes) {
		if state[c.nodes[loc]] == 0 {
			walk(c.nodes[loc])
		}
	}
}
