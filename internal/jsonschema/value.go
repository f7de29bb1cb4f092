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

// Limits on a number literal, so that no number costs more than a few microseconds to make exact
// and compare: larger ones are refused by Decode and fail every keyword that reads them.
const (
	// MaxExponent bounds the magnitude of a number literal's exponent (1e400, 1e-400).
	MaxExponent = 400
	// MaxDigits bounds the length of a number literal's digits before its exponent.
	MaxDigits = 1000
)

// NumberError is Decode's error for a number literal beyond MaxExponent or MaxDigits.
type NumberError struct {
	// Offset is the byte offset of the literal in the data.
	Offset int64
	// Literal is the literal, clipped.
	Literal string
}

func (e *NumberError) Error() string {
	return fmt.Sprintf("the number %s (at byte %d) is too large to check exactly: write a number with an exponent within ±%d and at most %d digits", e.Literal, e.Offset+1, MaxExponent, MaxDigits)
}

// Decode reads one JSON value, numbers kept exact (json.Number): the form Validate reads. Data
// that is not one JSON value is the error json.Unmarshal gives (a *json.SyntaxError has the
// offset); a number literal beyond MaxExponent or MaxDigits is a *NumberError.
func Decode(data []byte) (any, error) {
	var v any
	if !json.Valid(data) {
		return nil, json.Unmarshal(data, &v)
	}
	if err := checkNumbers(data); err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	err := d.Decode(&v)
	return v, err
}

// checkNumbers finds a number literal beyond the limits in valid JSON data.
func checkNumbers(data []byte) error {
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			for i++; data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case c == '-' || c >= '0' && c <= '9':
			j := i
			for j < len(data) && strings.IndexByte("+-.eE0123456789", data[j]) >= 0 {
				j++
			}
			if lit := string(data[i:j]); !literalOK(lit) {
				return &NumberError{Offset: int64(i), Literal: clip(lit)}
			}
			i = j - 1
		}
	}
	return nil
}

// literalOK reports whether a JSON number literal is within MaxDigits and MaxExponent.
func literalOK(s string) bool {
	mant, exp, _ := strings.Cut(strings.ToLower(s), "e")
	if len(mant)-strings.Count(mant, "-")-strings.Count(mant, ".") > MaxDigits {
		return false
	}
	exp = strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(exp, "+"), "-"), "0")
	return len(exp) <= 3 && (exp == "" || atoi(exp) <= MaxExponent)
}

// atoi reads at most a few decimal digits.
func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// number is v as an exact rational, when v is a JSON number within MaxExponent and MaxDigits
// (never NaN or an infinity).
func number(v any) (*big.Rat, bool) {
	var s string
	switch n := v.(type) {
	case json.Number:
		if !literalOK(string(n)) {
			return nil, false
		}
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

// decimal is a number's normalized decimal form, equal for equal numbers and short for a short
// literal: its significant digits, "e", and the exponent of the last one ("-15e2" for -1.50e3,
// "0" for zero). It reads the literal only, without arithmetic.
func decimal(v any) (string, bool) {
	var lit string
	switch n := v.(type) {
	case json.Number:
		lit = string(n)
	case float64:
		lit = strconv.FormatFloat(n, 'e', -1, 64)
	case float32:
		lit = strconv.FormatFloat(float64(n), 'e', -1, 32)
	case int:
		lit = strconv.Itoa(n)
	case int64:
		lit = strconv.FormatInt(n, 10)
	case uint64:
		lit = strconv.FormatUint(n, 10)
	default:
		return "", false
	}
	if !literalOK(lit) || strings.ContainsAny(lit, "NI") { // NaN, Inf
		return "", false
	}
	mant, exp, _ := strings.Cut(strings.ToLower(lit), "e")
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	whole, frac, _ := strings.Cut(mant, ".")
	e, _ := strconv.Atoi(strings.TrimPrefix(exp, "+")) // literalOK bounds it
	digits := strings.TrimLeft(whole+frac, "0")
	e -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	e += len(digits) - len(trimmed)
	if trimmed == "" {
		return "0", true
	}
	if neg {
		trimmed = "-" + trimmed
	}
	return trimmed + "e" + strconv.Itoa(e), true
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

// hasType reports whether v is of the JSON Schema type t ("integer": a number of integral value);
// r is v's exact value when v is a number, nil when it is none or has none.
func hasType(v any, r *big.Rat, t string) bool {
	if got := typeOf(v); got != "number" {
		return got == t
	}
	return r != nil && (t == "number" || t == "integer" && r.IsInt())
}

// equal reports whether two JSON values are equal: numbers by value, objects and arrays deeply.
func equal(x, y any) bool {
	tx, ty := typeOf(x), typeOf(y)
	if tx != ty {
		return false
	}
	switch tx {
	case "number":
		a, okA := number(x)
		b, okB := number(y)
		return okA && okB && a.Cmp(b) == 0
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
	if n, ok := v.(json.Number); ok {
		return clip(string(n))
	}
	if r, ok := number(v); ok {
		return ratText(r)
	}
	return clip(fmt.Sprint(v))
}

// ratText renders a number as its shortest decimal, clipped.
func ratText(r *big.Rat) string {
	if r.IsInt() {
		return clip(r.Num().String())
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
