package jsonschema

import (
	"math"
	"math/big"
	"regexp"
	"strconv"
)

// typeNames are the JSON Schema type names, in the order messages list them.
var typeNames = [...]string{"array", "boolean", "integer", "null", "number", "object", "string"}

func (c *compiler) typeName(v any, at []string) (string, bool) {
	s, ok := v.(string)
	for _, t := range typeNames {
		if ok && s == t {
			return s, true
		}
	}
	c.errs = append(c.errs, &Error{InstanceLocation: append([]string(nil), at...), Keyword: "enum",
		Message: "value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'"})
	return "", false
}

func (c *compiler) types(n *node, v any, at []string) {
	switch t := v.(type) {
	case string:
		if name, ok := c.typeName(t, at); ok {
			n.types = []string{name}
		}
	case []any:
		seen := map[string]bool{}
		for i, e := range t {
			name, ok := c.typeName(e, append(at[:len(at):len(at)], strconv.Itoa(i)))
			if ok && seen[name] {
				c.failf(append(at[:len(at):len(at)], strconv.Itoa(i)), "type %q is listed twice", name)
			}
			seen[name] = true
			n.types = append(n.types, name)
		}
	default:
		c.typeErr(at, v, "string or array")
	}
}

// assertion compiles the keywords that assert on a value itself.
func (c *compiler) assertion(n *node, k string, v any, at []string) bool {
	switch k {
	case "type":
		c.types(n, v, at)
	case "enum":
		if e, ok := v.([]any); ok {
			n.enum, n.hasEnum = e, true
			n.enumRats = make([]*big.Rat, len(e))
			for i, m := range e {
				n.enumRats[i] = c.exact(m, append(at[:len(at):len(at)], strconv.Itoa(i)))
			}
		} else {
			c.typeErr(at, v, "array")
		}
	case "const":
		n.constant, n.hasConst = v, true
		n.constRat = c.exact(v, at)
	case "pattern":
		n.pattern = c.regexp(v, at)
	case "required":
		n.required = c.names(v, at)
	case "uniqueItems":
		b, ok := v.(bool)
		if !ok {
			c.typeErr(at, v, "boolean")
		}
		n.unique = b
	case "dependentRequired":
		if c.draft < 2019 {
			return false // an annotation before draft 2019-09
		}
		m, ok := v.(map[string]any)
		if !ok {
			c.typeErr(at, v, "object")
			return true
		}
		for _, p := range sortedKeys(m) {
			c.depRequired(n, p, c.names(m[p], append(at[:len(at):len(at)], p)))
		}
	default:
		return false
	}
	return true
}

// exact returns the exact value of v when it is a number (nil when it is none), and refuses a
// value holding a number that has no exact value (NaN, an infinity, one beyond MaxExponent or
// MaxDigits).
func (c *compiler) exact(v any, at []string) *big.Rat {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			c.exact(e, append(at[:len(at):len(at)], strconv.Itoa(i)))
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			c.exact(x[k], append(at[:len(at):len(at)], k))
		}
	}
	if typeOf(v) != "number" {
		return nil
	}
	r, ok := number(v)
	if !ok {
		c.inexact(at, v)
	}
	return r
}

// inexact refuses a number that has no exact value.
func (c *compiler) inexact(at []string, v any) {
	c.failf(at, "the number %s has no exact value this validator checks: write a finite number with an exponent within ±%d and at most %d digits", display(v), MaxExponent, MaxDigits)
}

func (c *compiler) depRequired(n *node, prop string, names []string) {
	if n.depRequired == nil {
		n.depRequired = map[string][]string{}
	}
	n.depRequired[prop] = append(n.depRequired[prop], names...)
}

func (c *compiler) regexp(v any, at []string) *regexp.Regexp {
	s, ok := v.(string)
	if !ok {
		c.typeErr(at, v, "string")
		return nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		c.failf(at, "%s is not a valid regular expression: %v", quote(clip(s)), err)
	}
	return re
}

// names reads an array of distinct property names.
func (c *compiler) names(v any, at []string) []string {
	a, ok := v.([]any)
	if !ok {
		c.typeErr(at, v, "array")
		return nil
	}
	out := make([]string, 0, len(a))
	seen := map[string]bool{}
	for i, e := range a {
		s, ok := e.(string)
		switch {
		case !ok:
			c.typeErr(append(at[:len(at):len(at)], strconv.Itoa(i)), e, "string")
		case seen[s]:
			c.failf(append(at[:len(at):len(at)], strconv.Itoa(i)), "%s is listed twice", quote(clip(s)))
		default:
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// numeric compiles the bounds.
func (c *compiler) numeric(n *node, k string, v any, at []string) bool {
	var r **big.Rat
	var i *int
	switch k {
	case "minimum":
		r = &n.minimum
	case "maximum":
		r = &n.maximum
	case "exclusiveMinimum":
		r = &n.exclMin
	case "exclusiveMaximum":
		r = &n.exclMax
	case "multipleOf":
		r = &n.multipleOf
	case "minLength":
		i = &n.minLen
	case "maxLength":
		i = &n.maxLen
	case "minItems":
		i = &n.minItems
	case "maxItems":
		i = &n.maxItems
	case "minProperties":
		i = &n.minProps
	case "maxProperties":
		i = &n.maxProps
	case "minContains", "maxContains":
		if c.draft < 2019 {
			return false // an annotation before draft 2019-09
		}
		i = &n.minContains
		if k == "maxContains" {
			i = &n.maxContains
		}
	default:
		return false
	}
	c.bound(k, v, at, r, i)
	return true
}

// bound reads the value v of the numeric keyword k into r (a number) or i (a count).
func (c *compiler) bound(k string, v any, at []string, r **big.Rat, i *int) {
	num, ok := number(v)
	switch {
	case !ok && typeOf(v) == "number":
		c.inexact(at, v)
		return
	case !ok:
		c.typeErr(at, v, "number")
		return
	}
	if r != nil {
		if k == "multipleOf" && num.Sign() <= 0 {
			c.failf(at, "exclusiveMinimum: got %s, want 0", ratText(num))
			return
		}
		*r = num
		return
	}
	switch {
	case !num.IsInt():
		c.typeErr(at, v, "integer")
	case num.Sign() < 0:
		c.failf(at, "minimum: got %s, want 0", ratText(num))
	case num.Num().IsInt64() && num.Num().Int64() <= math.MaxInt32:
		*i = int(num.Num().Int64())
	default:
		*i = math.MaxInt32 // no value holds more
	}
}

// structural compiles the keywords that apply subschemas to an object's members or an array's
// items, and the definitions.
func (c *compiler) structural(n *node, k string, v any, at []string) bool {
	switch k {
	case "properties":
		n.props = c.schemaMap(v, at)
	case "patternProperties":
		m := c.schemaMap(v, at)
		for _, p := range sortedKeys(m) {
			if re := c.regexp(p, append(at[:len(at):len(at)], p)); re != nil {
				n.patternProps = append(n.patternProps, patternProp{re, m[p]})
			}
		}
	case "dependentSchemas":
		if c.draft < 2019 {
			return false // an annotation before draft 2019-09
		}
		n.depSchemas = c.schemaMap(v, at)
	case "dependencies":
		c.dependencies(n, v, at)
	case "$defs", "definitions":
		c.schemaMap(v, at)
	case "additionalProperties":
		n.additional = c.compile(v, at)
	case "propertyNames":
		n.propNames = c.compile(v, at)
	case "contains":
		n.contains = c.compile(v, at)
	default:
		return c.itemsKeyword(n, k, v, at)
	}
	return true
}

// itemsKeyword compiles items, prefixItems and additionalItems, as the draft has them: before
// 2020-12, an array of items is the tuple and additionalItems the rest.
func (c *compiler) itemsKeyword(n *node, k string, v any, at []string) bool {
	_, tuple := v.([]any)
	switch {
	case k == "prefixItems" && c.draft >= 2020, k == "items" && c.draft < 2020 && tuple:
		n.prefix = c.schemaList(v, at)
	case k == "items" && c.draft >= 2020 && tuple:
		c.failf(at, "items is one schema since draft 2020-12: a list of item schemas is prefixItems")
	case k == "items":
		n.items = c.compile(v, at)
	case k == "additionalItems" && c.draft < 2020:
		n.additionalItems = c.compile(v, at)
	default:
		return false
	}
	return true
}

func (c *compiler) dependencies(n *node, v any, at []string) {
	m, ok := v.(map[string]any)
	if !ok {
		c.typeErr(at, v, "object")
		return
	}
	for _, p := range sortedKeys(m) {
		pat := append(at[:len(at):len(at)], p)
		if _, isList := m[p].([]any); isList {
			c.depRequired(n, p, c.names(m[p], pat))
			continue
		}
		if n.depSchemas == nil {
			n.depSchemas = map[string]*node{}
		}
		n.depSchemas[p] = c.compile(m[p], pat)
	}
}

// applicator compiles the keywords that apply subschemas to the value itself.
func (c *compiler) applicator(n *node, k string, v any, at []string) bool {
	switch k {
	case "allOf":
		n.allOf = c.schemaList(v, at)
	case "anyOf":
		n.anyOf = c.schemaList(v, at)
	case "oneOf":
		n.oneOf = c.schemaList(v, at)
	case "not":
		n.not = c.compile(v, at)
	case "if", "then", "else":
		if c.draft < 7 {
			return false // an annotation before draft 07
		}
		sub := c.compile(v, at)
		switch k {
		case "if":
			n.ifs = sub
		case "then":
			n.then = sub
		default:
			n.els = sub
		}
	default:
		return false
	}
	return true
}

func (c *compiler) schemaMap(v any, at []string) map[string]*node {
	m, ok := v.(map[string]any)
	if !ok {
		c.typeErr(at, v, "object")
		return nil
	}
	out := make(map[string]*node, len(m))
	for _, k := range sortedKeys(m) {
		out[k] = c.compile(m[k], append(at[:len(at):len(at)], k))
	}
	return out
}

func (c *compiler) schemaList(v any, at []string) []*node {
	a, ok := v.([]any)
	if !ok {
		c.typeErr(at, v, "array")
		return nil
	}
	if len(a) == 0 {
		c.failf(at, "minItems: got 0, want 1")
	}
	out := make([]*node, len(a))
	for i, e := range a {
		out[i] = c.compile(e, append(at[:len(at):len(at)], strconv.Itoa(i)))
	}
	return out
}
