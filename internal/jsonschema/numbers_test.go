package jsonschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
)

// TestDecodeRefusesHugeNumbers: a number literal whose exponent or digits are beyond the limits
// is refused with its offset; literals at the limits are read.
func TestDecodeRefusesHugeNumbers(t *testing.T) {
	for bad, offset := range map[string]int64{`{"pullRequest":1e99999999}`: 15, `[-1e9999999999]`: 1, `[0, -1e-10000001]`: 4, `[1e401]`: 1, `["\"", 1E+401]`: 7,
		`[1` + strings.Repeat("0", MaxDigits) + `]`: 1, `[0.` + strings.Repeat("0", MaxDigits) + `1]`: 1} {
		_, err := Decode([]byte(bad))
		var ne *NumberError
		if !errors.As(err, &ne) {
			t.Errorf("Decode(%.40s): got %v, want a *NumberError", bad, err)
			continue
		}
		if ne.Offset != offset {
			t.Errorf("Decode(%.40s): offset %d, want %d", bad, ne.Offset, offset)
		}
		if len(err.Error()) > 300 || !strings.Contains(err.Error(), "exponent within ±400") {
			t.Errorf("Decode(%.40s): message %q", bad, err)
		}
	}
	for _, good := range []string{`[1e400, -1e-400, 1E+400, 0.5e-0400, "1e99999999", "\"1e999999"]`, `[1` + strings.Repeat("0", MaxDigits-1) + `]`} {
		if _, err := Decode([]byte(good)); err != nil {
			t.Errorf("Decode(%.40s): %v", good, err)
		}
	}
}

// inexactValues are numbers a Go caller may hand Validate that have no exact value within the
// limits.
var inexactValues = []any{json.Number("1e99999999"), json.Number("-1e9999999999"), json.Number("-1e-10000001"), math.NaN(), math.Inf(1), math.Inf(-1)}

// TestInexactNumbersFailClosed: every keyword that reads a number's value fails one it cannot
// make exact, never passes it and never panics.
func TestInexactNumbersFailClosed(t *testing.T) {
	schemas := []string{`{"type": "integer"}`, `{"type": "number"}`, `{"type": ["string", "number"]}`, `{"const": 1}`, `{"enum": [1, "a"]}`, `{"minimum": 0}`, `{"maximum": 0}`,
		`{"exclusiveMinimum": 0}`, `{"exclusiveMaximum": 0}`, `{"multipleOf": 1}`, `{"properties": {"n": {"minimum": 0}}}`}
	for _, src := range schemas {
		s, err := Compile(mustDecode(t, src))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range inexactValues {
			doc := any(map[string]any{"n": v})
			if !strings.Contains(src, "properties") {
				doc = v
			}
			err := s.Validate(doc)
			var ve *ValidationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), "beyond what can be checked exactly") {
				t.Errorf("%s against %v: got %v, want a failure", src, v, err)
			}
		}
	}
	same(t, "no keyword reads it", validate(t, `{"type": "number"}`, `1e400`), nil)
}

// TestSchemaRefusesInexactNumbers: a schema built in Go holding NaN, an infinity or a number
// beyond the limits in a bound, const or enum is refused where it stands.
func TestSchemaRefusesInexactNumbers(t *testing.T) {
	for _, doc := range []map[string]any{
		{"const": math.NaN()}, {"enum": []any{1.0, math.Inf(1)}}, {"const": []any{map[string]any{"a": math.Inf(-1)}}},
		{"const": json.Number("1e500")}, {"minimum": math.NaN()}, {"maximum": json.Number("-1e99999999")}, {"multipleOf": math.Inf(1)},
	} {
		_, err := Compile(doc)
		var se *SchemaError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "has no exact value") {
			t.Errorf("Compile(%v): got %v, want a *SchemaError", doc, err)
		}
	}
	// A valid schema with NaN in it no longer crashes on a number.
	if _, err := Compile(map[string]any{"enum": []any{math.NaN()}}); err == nil {
		t.Error("an enum holding NaN compiled")
	}
}

// TestNumberMessagesAreClipped: a message shows a number's literal, clipped, not every digit.
func TestNumberMessagesAreClipped(t *testing.T) {
	same(t, "minimum", validate(t, `{"minimum": 0}`, `-1e400`), []string{"at /: minimum: got -1e400, want 0"})
	long := "1" + strings.Repeat("0", 400)
	got := validate(t, `{"maximum": 1e400}`, long+"1")
	if len(got) != 1 || len(got[0]) > 200 {
		t.Errorf("got %q, want one short message", got)
	}
	got = validate(t, `{"const": 1e400}`, `1`)
	if len(got) != 1 || len(got[0]) > 200 {
		t.Errorf("got %q, want one short message", got)
	}
}

// hostileResult is a 1 MiB array of distinct numbers at the limits, each failing several
// keywords.
func hostileResult() []byte {
	var b strings.Builder
	b.WriteString("[")
	for i := 1; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "-%de400,%de-400,", i, i)
	}
	b.WriteString("0]")
	return []byte(b.String())
}

const hostileSchema = `{"uniqueItems": true, "items": {"type": "integer", "minimum": 1, "maximum": 1e399, "multipleOf": 7, "enum": [1e400, 2e400]}}`

// TestHostileNumbersAreBounded: a 1 MiB result of numbers at the limits is checked with bounded
// memory, its failures capped at MaxErrors and counted, each message short.
func TestHostileNumbersAreBounded(t *testing.T) {
	data := hostileResult()
	s, err := Compile(mustDecode(t, hostileSchema))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	v, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(v)
	runtime.ReadMemStats(&after)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v, want a *ValidationError", err)
	}
	if len(ve.Errors) != MaxErrors+1 || !strings.HasPrefix(ve.Errors[MaxErrors].Message, "and ") {
		t.Errorf("got %d errors (last %q), want %d and a count of the rest", len(ve.Errors), ve.Errors[len(ve.Errors)-1].Message, MaxErrors+1)
	}
	if n := len(err.Error()); n > 100*MaxErrors {
		t.Errorf("the message is %d bytes", n)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 320<<20 {
		t.Errorf("checking 1 MiB allocated %d MiB, want under 320", alloc>>20)
	}
}

// BenchmarkHostileResult measures checking the 1 MiB hostile result.
func BenchmarkHostileResult(b *testing.B) {
	data := hostileResult()
	s, err := Compile(mustDecodeB(b, hostileSchema))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		v, err := Decode(data)
		if err != nil {
			b.Fatal(err)
		}
		_ = s.Validate(v)
	}
}

func mustDecodeB(b *testing.B, s string) any {
	v, err := Decode([]byte(s))
	if err != nil {
		b.Fatal(err)
	}
	return v
}
