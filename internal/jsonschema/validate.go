package jsonschema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxErrors is how many failures one Validate reports: the rest are counted in a last one.
const MaxErrors = 100

// Validate checks v (a JSON value, as Decode returns) against the schema and returns a
// *ValidationError listing its failures (the first MaxErrors, then their count), nil when v
// satisfies it. A schema too costly for v (more than MaxSteps subschema applications) is an error
// of its own.
func (s *Schema) Validate(v any) error {
	st := &state{budget: MaxSteps}
	errs := st.eval(s.root, v, nil)
	if st.budget < 0 {
		return fmt.Errorf("checking the value against the schema takes more than %d steps: simplify the schema's nested anyOf, oneOf and $ref", MaxSteps)
	}
	if len(errs) == 0 {
		return nil
	}
	if len(errs) > MaxErrors {
		rest := len(errs) - MaxErrors
		errs = append(errs[:MaxErrors:MaxErrors], &Error{Keyword: "maxErrors", Got: rest, Message: fmt.Sprintf("and %d more failures", rest)})
	}
	return &ValidationError{Errors: errs}
}

// state is one Validate's: its remaining steps, and the exact value of each number literal it
// has read, so that no literal is parsed twice.
type state struct {
	budget int
	nums   map[json.Number]*big.Rat
}

// number is v's exact value (as the function number), each literal parsed once.
func (st *state) number(v any) (*big.Rat, bool) {
	lit, ok := v.(json.Number)
	if !ok {
		return number(v)
	}
	if r, hit := st.nums[lit]; hit {
		return r, r != nil
	}
	r, ok := number(v)
	if st.nums == nil {
		st.nums = map[json.Number]*big.Rat{}
	}
	st.nums[lit] = r
	return r, ok
}

// path is the location of a value, innermost token first.
type path struct {
	up  *path
	tok string
}

func (p *path) tokens() []string {
	n := 0
	for q := p; q != nil; q = q.up {
		n++
	}
	out := make([]string, n)
	for q := p; q != nil; q = q.up {
		n--
		out[n] = q.tok
	}
	return out
}

func (n *node) fail(at *path, kw string, want, got any, format string, args ...any) *Error {
	return &Error{InstanceLocation: at.tokens(), SchemaLocation: n.loc, Keyword: kw, Want: want, Got: got, Message: fmt.Sprintf(format, args...)}
}

// eval applies n to v, at at, and returns its failures.
func (st *state) eval(n *node, v any, at *path) []*Error {
	if st.budget--; st.budget < 0 {
		return nil
	}
	if n.always != nil {
		if *n.always {
			return nil
		}
		return []*Error{n.fail(at, "false", nil, v, "false schema")}
	}
	if n.refOnly {
		return st.eval(n.target, v, at)
	}
	var r *big.Rat
	if n.readsNumbers() && typeOf(v) == "number" {
		var ok bool
		if r, ok = st.number(v); !ok {
			return []*Error{n.fail(at, n.numberKeyword(), nil, v, "the number %s is beyond what can be checked exactly: write one with an exponent within ±%d and at most %d digits", display(v), MaxExponent, MaxDigits)}
		}
	}
	if e := n.assert(v, r, at); e != nil {
		return []*Error{e}
	}
	var errs []*Error
	if n.target != nil {
		errs = st.eval(n.target, v, at)
	}
	switch x := v.(type) {
	case map[string]any:
		errs = st.object(n, x, at, errs)
	case []any:
		errs = st.array(n, x, at, errs)
	case string:
		errs = n.str(x, at, errs)
	default:
		if r != nil && n.numeric() {
			errs = n.num(v, r, at, errs)
		}
	}
	return st.applicators(n, v, at, errs)
}

// readsNumbers reports whether a keyword of n reads a number's value.
func (n *node) readsNumbers() bool {
	return len(n.types) > 0 || n.hasConst || n.hasEnum || n.numeric()
}

// numberKeyword names the first keyword of n that reads a number's value.
func (n *node) numberKeyword() string {
	switch {
	case len(n.types) > 0:
		return "type"
	case n.hasConst:
		return "const"
	case n.hasEnum:
		return "enum"
	}
	for _, b := range []struct {
		kw string
		r  *big.Rat
	}{{"minimum", n.minimum}, {"maximum", n.maximum}, {"exclusiveMinimum", n.exclMin}, {"exclusiveMaximum", n.exclMax}} {
		if b.r != nil {
			return b.kw
		}
	}
	return "multipleOf"
}

// sameNumber reports whether the exact number r (nil: v is no number) equals w, whose exact value
// is wr (nil: w is no number).
func sameNumber(v any, r *big.Rat, w any, wr *big.Rat) bool {
	if r != nil || wr != nil {
		return r != nil && wr != nil && r.Cmp(wr) == 0
	}
	return equal(v, w)
}

// assert checks type, const and enum (r is v's exact value when v is a number): a value failing
// one is not checked further.
func (n *node) assert(v any, r *big.Rat, at *path) *Error {
	if len(n.types) > 0 {
		ok := false
		for _, t := range n.types {
			ok = ok || hasType(v, r, t)
		}
		if !ok {
			return n.fail(at, "type", n.types, typeOf(v), "got %s, want %s", typeOf(v), strings.Join(n.types, " or "))
		}
	}
	if n.hasConst && !sameNumber(v, r, n.constant, n.constRat) {
		if typeOf(n.constant) == "object" || typeOf(n.constant) == "array" {
			return n.fail(at, "const", n.constant, v, "'const' failed")
		}
		return n.fail(at, "const", n.constant, v, "value must be %s", display(n.constant))
	}
	if n.hasEnum {
		for i, e := range n.enum {
			if sameNumber(v, r, e, n.enumRats[i]) {
				return nil
			}
		}
		return n.fail(at, "enum", n.enum, v, "%s", enumText(n.enum))
	}
	return nil
}

// enumText says which values an enum allows, the first maxListed of them.
func enumText(want []any) string {
	parts := make([]string, 0, min(len(want), maxListed)+1)
	for i, w := range want {
		if t := typeOf(w); t == "object" || t == "array" {
			return "'enum' failed"
		}
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(want)-maxListed))
			break
		}
		parts = append(parts, display(w))
	}
	if len(want) == 1 {
		return "value must be " + parts[0]
	}
	return "value must be one of " + strings.Join(parts, ", ")
}

func (st *state) object(n *node, obj map[string]any, at *path, errs []*Error) []*Error {
	if n.minProps >= 0 && len(obj) < n.minProps {
		errs = append(errs, n.fail(at, "minProperties", n.minProps, len(obj), "minProperties: got %d, want %d", len(obj), n.minProps))
	}
	if n.maxProps >= 0 && len(obj) > n.maxProps {
		errs = append(errs, n.fail(at, "maxProperties", n.maxProps, len(obj), "maxProperties: got %d, want %d", len(obj), n.maxProps))
	}
	if missing := missingOf(obj, n.required); len(missing) == 1 {
		errs = append(errs, n.fail(at, "required", n.required, nil, "missing property %s", quote(missing[0])))
	} else if len(missing) > 1 {
		errs = append(errs, n.fail(at, "required", n.required, nil, "missing properties %s", joinQuoted(missing)))
	}
	for _, p := range sortedKeys(n.depRequired) {
		if _, ok := obj[p]; ok {
			if missing := missingOf(obj, n.depRequired[p]); len(missing) > 0 {
				errs = append(errs, n.fail(at, "dependentRequired", nil, nil, "properties %s required, if %s exists", joinQuoted(missing), quote(p)))
			}
		}
	}
	var extra []string
	for _, k := range sortedKeys(obj) {
		evaluated := false
		if sub, ok := n.props[k]; ok {
			evaluated = true
			errs = append(errs, st.eval(sub, obj[k], &path{at, k})...)
		}
		for _, pp := range n.patternProps {
			if pp.re.MatchString(k) {
				evaluated = true
				errs = append(errs, st.eval(pp.n, obj[k], &path{at, k})...)
			}
		}
		if !evaluated && n.additional != nil {
			if f := n.additional.always; f != nil && !*f {
				extra = append(extra, k)
			} else {
				errs = append(errs, st.eval(n.additional, obj[k], &path{at, k})...)
			}
		}
		if n.propNames != nil && len(st.eval(n.propNames, k, at)) > 0 {
			errs = append(errs, n.propNames.fail(at, "propertyNames", nil, k, "invalid propertyName %s", quote(clip(k))))
		}
	}
	if len(extra) > 0 {
		errs = append(errs, n.fail(at, "additionalProperties", nil, extra, "additional properties %s not allowed", joinQuoted(extra)))
	}
	for _, p := range sortedKeys(n.depSchemas) {
		if _, ok := obj[p]; ok {
			errs = append(errs, st.eval(n.depSchemas[p], obj, at)...)
		}
	}
	return errs
}

func missingOf(obj map[string]any, names []string) []string {
	var out []string
	for _, r := range names {
		if _, ok := obj[r]; !ok {
			out = append(out, r)
		}
	}
	return out
}

func (st *state) array(n *node, arr []any, at *path, errs []*Error) []*Error {
	if n.minItems >= 0 && len(arr) < n.minItems {
		errs = append(errs, n.fail(at, "minItems", n.minItems, len(arr), "minItems: got %d, want %d", len(arr), n.minItems))
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		errs = append(errs, n.fail(at, "maxItems", n.maxItems, len(arr), "maxItems: got %d, want %d", len(arr), n.maxItems))
	}
	if n.unique {
		if i, j, dup := duplicate(arr); dup {
			errs = append(errs, n.fail(at, "uniqueItems", nil, nil, "items at %d and %d are equal", i, j))
		}
	}
	for i, item := range arr {
		sub := n.items
		if i < len(n.prefix) {
			sub = n.prefix[i]
		}
		if sub != nil {
			errs = append(errs, st.eval(sub, item, &path{at, strconv.Itoa(i)})...)
		}
	}
	if n.contains == nil {
		return errs
	}
	matched := 0
	for i, item := range arr {
		if len(st.eval(n.contains, item, &path{at, strconv.Itoa(i)})) == 0 {
			matched++
		}
	}
	switch least := max(n.minContains, 1); {
	case n.minContains == 0:
	case matched == 0 && n.minContains < 0:
		errs = append(errs, n.fail(at, "contains", nil, nil, "no items match contains schema"))
	case matched < least:
		errs = append(errs, n.fail(at, "minContains", least, matched, "min %d items required to match contains schema, but matched %d", least, matched))
	}
	if n.maxContains >= 0 && matched > n.maxContains {
		errs = append(errs, n.fail(at, "maxContains", n.maxContains, matched, "max %d items required to match contains schema, but matched %d", n.maxContains, matched))
	}
	return errs
}

// duplicate finds two equal items, in linear time: each item is keyed by its canonical form.
func duplicate(arr []any) (int, int, bool) {
	seen := make(map[string]int, len(arr))
	var b strings.Builder
	for j, item := range arr {
		b.Reset()
		canonical(&b, item)
		if i, ok := seen[b.String()]; ok {
			return i, j, true
		}
		seen[b.String()] = j
	}
	return 0, 0, false
}

// canonical writes a form of v equal for equal JSON values: numbers by value, members sorted.
func canonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case []any:
		b.WriteByte('[')
		for _, e := range x {
			canonical(b, e)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for _, k := range sortedKeys(x) {
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			canonical(b, x[k])
			b.WriteByte(',')
		}
		b.WriteByte('}')
	case string:
		b.WriteString(strconv.Quote(x))
	default:
		if d, ok := decimal(v); ok {
			b.WriteString(d)
			return
		}
		fmt.Fprint(b, v)
	}
}

func (n *node) str(s string, at *path, errs []*Error) []*Error {
	if n.minLen >= 0 || n.maxLen >= 0 {
		l := utf8.RuneCountInString(s)
		if n.minLen >= 0 && l < n.minLen {
			errs = append(errs, n.fail(at, "minLength", n.minLen, l, "minLength: got %d, want %d", l, n.minLen))
		}
		if n.maxLen >= 0 && l > n.maxLen {
			errs = append(errs, n.fail(at, "maxLength", n.maxLen, l, "maxLength: got %d, want %d", l, n.maxLen))
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		errs = append(errs, n.fail(at, "pattern", n.pattern.String(), s, "%s does not match pattern %s", quote(clip(s)), quote(n.pattern.String())))
	}
	return errs
}

// numeric reports whether n bounds numbers.
func (n *node) numeric() bool {
	return n.minimum != nil || n.maximum != nil || n.exclMin != nil || n.exclMax != nil || n.multipleOf != nil
}

// num checks the bounds of the number v, whose exact value is r.
func (n *node) num(v any, r *big.Rat, at *path, errs []*Error) []*Error {
	bound := func(kw string, b *big.Rat, fails func(c int) bool) {
		if b != nil && fails(r.Cmp(b)) {
			errs = append(errs, n.fail(at, kw, b, r, "%s: got %s, want %s", kw, display(v), ratText(b)))
		}
	}
	bound("minimum", n.minimum, func(c int) bool { return c < 0 })
	bound("maximum", n.maximum, func(c int) bool { return c > 0 })
	bound("exclusiveMinimum", n.exclMin, func(c int) bool { return c <= 0 })
	bound("exclusiveMaximum", n.exclMax, func(c int) bool { return c >= 0 })
	if n.multipleOf != nil && !new(big.Rat).Quo(r, n.multipleOf).IsInt() {
		errs = append(errs, n.fail(at, "multipleOf", n.multipleOf, r, "%s not multipleOf %s", display(v), ratText(n.multipleOf)))
	}
	return errs
}

// applicators applies not, allOf, anyOf, oneOf and if/then/else.
func (st *state) applicators(n *node, v any, at *path, errs []*Error) []*Error {
	if n.not != nil && len(st.eval(n.not, v, at)) == 0 {
		errs = append(errs, n.fail(at, "not", nil, v, "'not' failed"))
	}
	for _, sub := range n.allOf {
		errs = append(errs, st.eval(sub, v, at)...)
	}
	if len(n.anyOf) > 0 {
		var failed []*Error
		for _, sub := range n.anyOf {
			e := st.eval(sub, v, at)
			if len(e) == 0 {
				failed = nil
				break
			}
			failed = append(failed, e...)
		}
		errs = append(errs, failed...)
	}
	errs = st.oneOf(n, v, at, errs)
	if n.ifs != nil {
		if len(st.eval(n.ifs, v, at)) == 0 {
			if n.then != nil {
				errs = append(errs, st.eval(n.then, v, at)...)
			}
		} else if n.els != nil {
			errs = append(errs, st.eval(n.els, v, at)...)
		}
	}
	return errs
}

func (st *state) oneOf(n *node, v any, at *path, errs []*Error) []*Error {
	if len(n.oneOf) == 0 {
		return errs
	}
	var failed []*Error
	matched := -1
	for i, sub := range n.oneOf {
		e := st.eval(sub, v, at)
		switch {
		case len(e) > 0:
			failed = append(failed, e...)
		case matched >= 0:
			return append(errs, n.fail(at, "oneOf", nil, v, "'oneOf' failed, subschemas %d, %d matched", matched, i))
		default:
			matched = i
		}
	}
	if matched < 0 {
		return append(errs, failed...)
	}
	return errs
}
