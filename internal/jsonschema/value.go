package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// Decode reads one JSON value, numbers kept exact (json.Number): the form Validate reads. Data
// that is not one JSON value is the error json.Unmarshal gives (a *json.SyntaxError has the
// offset).
func Decode(data []byte) (any, error) {
	var v any
	if !json.Valid(data) {
		return nil, json.Unmarshal(data, &v)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	err := d.Decode(&v)
	return v, err
}

// number is v as an exact rational, when v is a JSON number.
func number(v any) (*big.Rat, bool) {
	var s string
	switch n := v.(type) {
	case json.Number:
		s = string(n)
	case float64:
		s = strconv.FormatFloat(n, 'g', -1, 64)
	case float32:
		s = strconv.FormatFloat(float64(n), 'g', -1, 32)
	case int:
		return new(big.Rat).SetInt64(int64(n)), true
	case int64:
		return new(big.Rat).SetInt64(n), true
	case uint64:
		return new(big.Rat).SetUint64(n), true
	default:
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// typeOf names v's JSON type ("" for a Go value JSON does not have).
func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number, float64, float32, int, int64, uint64:
		return "number" // a json.Number is one Decode or the caller checked
	}
	return ""
}

// hasType reports whether v is of the JSON Schema type t ("integer": a number of integral value).
func hasType(v any, t string) bool {
	got := typeOf(v)
	if t == "integer" && got == "number" {
		r, _ := number(v)
		return r.IsInt()
	}
	return got == t
}

// equal reports whether two JSON values are equal: numbers by value, objects and arrays deeply.
func equal(x, y any) bool {
	tx, ty := typeOf(x), typeOf(y)
	if tx != ty {
		return false
	}
	switch tx {
	case "number":
		a, _ := number(x)
		b, _ := number(y)
		return a.Cmp(b) == 0
	case "array":
		a, b := x.([]any), y.([]any)
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equal(a[i], b[i]) {
				return false
			}
		}
		return true
	case "object":
		a, b := x.(map[string]any), y.(map[string]any)
		if len(a) != len(b) {
			return false
		}
		for k, va := range a {
			vb, ok := b[k]
			if !ok || !equal(va, vb) {
				return false
			}
		}
		return true
	}
	return x == y
}

// quote renders a string in single quotes, as the messages show names and values.
func quote(s string) string {
	s = strconv.Quote(s)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s[1:len(s)-1] + "'"
}

// display renders a primitive JSON value for a message ("value" for an object or array).
func display(v any) string {
	switch v := v.(type) {
	case string:
		return quote(clip(v))
	case []any, map[string]any:
		return "value"
	}
	if r, ok := number(v); ok {
		return ratText(r)
	}
	return fmt.Sprint(v)
}

// ratText renders a number as its shortest decimal.
func ratText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// clip shortens a long string for a message: a value may be large.
func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// maxListed is how many names or values a message lists before it counts the rest.
const maxListed = 10

// joinQuoted lists names, quoted, at most maxListed of them.
func joinQuoted(names []string) string {
	out := make([]string, 0, min(len(names), maxListed)+1)
	for i, n := range names {
		if i == maxListed {
			out = append(out, fmt.Sprintf("and %d more", len(names)-maxListed))
			break
		}
		out = append(out, quote(clip(n)))
	}
	return strings.Join(out, ", ")
}

// sortedKeys is an object's member names in order: messages and the order of errors do not
// depend on a map's iteration.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// escape writes a name as a JSON pointer token.
func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}
