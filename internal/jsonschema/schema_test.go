package jsonschema

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := Decode([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// failures lists "at LOC: MESSAGE" for every error of err, a *ValidationError or *SchemaError.
func failures(t *testing.T, err error) []string {
	t.Helper()
	var list []*Error
	var ve *ValidationError
	var se *SchemaError
	switch {
	case errors.As(err, &ve):
		list = ve.Errors
	case errors.As(err, &se):
		list = se.Errors
	default:
		t.Fatalf("want a *ValidationError or *SchemaError, got %T %v", err, err)
	}
	var out []string
	for _, e := range list {
		out = append(out, "at /"+strings.Join(e.InstanceLocation, "/")+": "+e.Message)
	}
	return out
}

func compileErrors(t *testing.T, schema string) []string {
	t.Helper()
	_, err := Compile(mustDecode(t, schema))
	if err == nil {
		t.Fatalf("%s compiled, want an error", schema)
	}
	return failures(t, err)
}

func validate(t *testing.T, schema, doc string) []string {
	t.Helper()
	s, err := Compile(mustDecode(t, schema))
	if err != nil {
		t.Fatalf("%s: %v", schema, err)
	}
	err = s.Validate(mustDecode(t, doc))
	if err == nil {
		return nil
	}
	return failures(t, err)
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// TestValidateReportsEveryFailure: every failing value is reported, at its location, not only
// the first.
func TestValidateReportsEveryFailure(t *testing.T) {
	schema := `{"type": "object", "required": ["a", "b", "c"], "additionalProperties": false,
	  "properties": {"a": {"type": "integer", "minimum": 1}, "b": {"enum": ["x", "y"]}, "c": {"type": "array", "items": {"type": "string", "maxLength": 2}, "uniqueItems": true},
	    "d": {"const": 3}, "e": {"pattern": "^[a-z]+$"}, "f": {"multipleOf": 0.5, "exclusiveMaximum": 2}}}`
	got := validate(t, schema, `{"a": 0, "b": "z", "c": ["ab", "abc", "ab", 4], "d": 3.0, "e": "A", "f": 2.25, "g": 1, "h": 2}`)
	same(t, "failures", got, []string{
		"at /a: minimum: got 0, want 1",
		"at /b: value must be one of 'x', 'y'",
		"at /c: items at 0 and 2 are equal",
		"at /c/1: maxLength: got 3, want 2",
		"at /c/3: got number, want string",
		"at /e: 'A' does not match pattern '^[a-z]+$'",
		"at /f: exclusiveMaximum: got 2.25, want 2",
		"at /f: 2.25 not multipleOf 0.5",
		"at /: additional properties 'g', 'h' not allowed",
	})
	same(t, "missing", validate(t, schema, `{}`), []string{"at /: missing properties 'a', 'b', 'c'"})
	same(t, "valid", validate(t, schema, `{"a": 1, "b": "x", "c": []}`), nil)
}

func TestApplicators(t *testing.T) {
	for _, c := range []struct {
		schema, doc string
		want        []string
	}{
		{`{"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 5}]}`, `3`, []string{"at /: got number, want string", "at /: minimum: got 3, want 5"}},
		{`{"anyOf": [{"type": "string"}, {"type": "integer"}]}`, `3`, nil},
		{`{"oneOf": [{"type": "integer"}, {"minimum": 0}]}`, `3`, []string{"at /: 'oneOf' failed, subschemas 0, 1 matched"}},
		{`{"oneOf": [{"type": "integer"}, {"minimum": 5}]}`, `3`, nil},
		{`{"not": {"required": ["x"]}}`, `{"x": 1}`, []string{"at /: 'not' failed"}},
		{`{"if": {"properties": {"v": {"const": "a"}}}, "then": {"required": ["w"]}, "else": {"required": ["z"]}}`, `{"v": "a"}`, []string{"at /: missing property 'w'"}},
		{`{"if": {"properties": {"v": {"const": "a"}}}, "then": {"required": ["w"]}, "else": {"required": ["z"]}}`, `{"v": "b"}`, []string{"at /: missing property 'z'"}},
		{`{"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"b": {"properties": {"c": false}}}}`, `{"a": 1, "b": 2, "c": 3}`, []string{"at /c: false schema"}},
		{`{"contains": {"const": 1}, "maxContains": 1}`, `[1, 2, 1]`, []string{"at /: max 1 items required to match contains schema, but matched 2"}},
		{`{"contains": {"const": 1}}`, `[2]`, []string{"at /: no items match contains schema"}},
		{`{"prefixItems": [{"type": "string"}], "items": false}`, `["a", 1]`, []string{"at /1: false schema"}},
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}], "additionalItems": {"type": "integer"}}`, `["a", 1, "b"]`, []string{"at /2: got string, want integer"}},
		{`{"propertyNames": {"maxLength": 2}}`, `{"abc": 1}`, []string{"at /: invalid propertyName 'abc'"}},
		{`{"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": {"type": "integer"}}`, `{"x-a": 1, "b": "c"}`, []string{"at /b: got string, want integer", "at /x-a: got number, want string"}},
		{`{"$defs": {"pos": {"$anchor": "pos", "type": "integer", "minimum": 1}}, "properties": {"a": {"$ref": "#/$defs/pos"}, "b": {"$ref": "#pos"}}}`, `{"a": 0, "b": "x"}`, []string{"at /a: minimum: got 0, want 1", "at /b: got string, want integer"}},
		{`{"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}}`, `{"kids": [{"kids": [3]}]}`, []string{"at /kids/0/kids/0: got number, want object"}},
	} {
		got := validate(t, c.schema, c.doc)
		same(t, c.schema+" on "+c.doc, got, c.want)
	}
}

// TestSchemaErrorsArePositioned: every way a schema document is wrong is reported at its place.
func TestSchemaErrorsArePositioned(t *testing.T) {
	got := compileErrors(t, `{"type": "object", "properties": {"a": {"type": "strin"}, "b": {"minLength": -1}, "c": {"pattern": "("}, "d": 3},
	  "required": ["a", "a", 4], "allOf": [], "items": [{}]}`)
	same(t, "schema errors", got, []string{
		"at /allOf: minItems: got 0, want 1",
		"at /items: items is one schema since draft 2020-12: a list of item schemas is prefixItems",
		"at /properties/a/type: value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'",
		"at /properties/b/minLength: minimum: got -1, want 0",
		"at /properties/c/pattern: '(' is not a valid regular expression: error parsing regexp: missing closing ): `(`",
		"at /properties/d: got number, want object or boolean",
		"at /required/1: 'a' is listed twice",
		"at /required/2: got number, want string",
	})
}

// TestHostileSchemas: what a hostile schema tries is refused with a positioned reason, never run.
func TestHostileSchemas(t *testing.T) {
	for _, c := range []struct{ name, schema, want string }{
		{"remote $ref", `{"properties": {"a": {"$ref": "https://example.com/s.json"}}}`, `at /properties/a/$ref: $ref "https://example.com/s.json" leaves the schema: it may not reference another document`},
		{"file $ref", `{"$ref": "file:///etc/passwd"}`, `at /$ref: $ref "file:///etc/passwd" leaves the schema`},
		{"relative $ref", `{"$ref": "other.json#/a"}`, `at /$ref: $ref "other.json#/a" leaves the schema`},
		{"dangling $ref", `{"$ref": "#/$defs/nope"}`, `at /$ref: $ref "#/$defs/nope" refers to no subschema of this schema`},
		{"self cycle", `{"$ref": "#"}`, `at /$ref: $ref "#" makes a cycle`},
		{"cycle through allOf", `{"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}`, `makes a cycle`},
		{"unsupported keyword", `{"properties": {"a": {"unevaluatedProperties": false}}}`, `at /properties/a/unevaluatedProperties: unevaluatedProperties is not supported by autonomy's JSON Schema validator`},
		{"dynamic ref", `{"$dynamicRef": "#meta"}`, `at /$dynamicRef: $dynamicRef is not supported`},
		{"nested $id", `{"properties": {"a": {"$id": "https://example.com/a"}}}`, `at /properties/a/$id: a nested $id is not supported`},
		{"unknown draft", `{"$schema": "https://example.com/my-meta"}`, `at /$schema: $schema "https://example.com/my-meta" is not a draft this validator reads`},
		{"draft-04", `{"$schema": "http://json-schema.org/draft-04/schema#"}`, `is not a draft this validator reads`},
		{"deep nesting", strings.Repeat(`{"not": `, MaxDepth+5) + `{}` + strings.Repeat(`}`, MaxDepth+5), fmt.Sprintf("the schema nests deeper than %d levels", MaxDepth)},
	} {
		got := strings.Join(compileErrors(t, c.schema), "\n")
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want it to contain %q", c.name, got, c.want)
		}
	}
}

// TestHugeEnum: a long enum is checked, and its message lists ten values and counts the rest.
func TestHugeEnum(t *testing.T) {
	values := make([]string, 100000)
	for i := range values {
		values[i] = fmt.Sprintf("%q", fmt.Sprint("v", i))
	}
	schema := `{"enum": [` + strings.Join(values, ",") + `]}`
	same(t, "in the enum", validate(t, schema, `"v99999"`), nil)
	got := validate(t, schema, `"nope"`)
	want := "at /: value must be one of 'v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8', 'v9', and 99990 more"
	same(t, "not in the enum", got, []string{want})
}

// TestExponentialSchemaIsBounded: nested anyOf whose branches all fail would take 2^40 steps;
// Validate gives up after MaxSteps with an error that says so.
func TestExponentialSchemaIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"$defs": {`)
	for i := range 40 {
		fmt.Fprintf(&b, `"d%d": {"anyOf": [{"$ref": "#/$defs/d%d"}, {"$ref": "#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	b.WriteString(`"d40": {"type": "string"}}, "$ref": "#/$defs/d0"}`)
	s, err := Compile(mustDecode(t, b.String()))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(mustDecode(t, `1`))
	var ve *ValidationError
	if err == nil || errors.As(err, &ve) || !strings.Contains(err.Error(), "takes more than") {
		t.Errorf("got %v, want the step limit's error", err)
	}
}

// TestUniqueItemsIsLinear: a large array of distinct items is checked without comparing every
// pair (a quadratic check of 200,000 items would not finish in a test's time).
func TestUniqueItemsIsLinear(t *testing.T) {
	items := make([]string, 200000)
	for i := range items {
		items[i] = fmt.Sprintf(`{"n": %d, "m": [%d.0]}`, i, i)
	}
	same(t, "distinct", validate(t, `{"uniqueItems": true}`, `[`+strings.Join(items, ",")+`]`), nil)
	same(t, "equal by value", validate(t, `{"uniqueItems": true}`, `[{"a": [1, 2.0]}, {"a": [1.0, 2]}]`), []string{"at /: items at 0 and 1 are equal"})
}

func TestNumbersAreExact(t *testing.T) {
	same(t, "integer", validate(t, `{"type": "integer"}`, `1.0`), nil)
	same(t, "not integer", validate(t, `{"type": "integer"}`, `1.5`), []string{"at /: got number, want integer"})
	same(t, "big", validate(t, `{"maximum": 9007199254740993}`, `9007199254740994`), []string{"at /: maximum: got 9007199254740994, want 9007199254740993"})
	same(t, "const", validate(t, `{"const": 1}`, `1.00`), nil)
}

func TestDecode(t *testing.T) {
	for _, bad := range []string{``, `{`, `{} {}`, `[1,]`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) succeeded", bad)
		}
	}
}

// TestValidateConcurrently: one compiled schema serves many goroutines (the runner validates
// results of concurrent sessions); run with -race.
func TestValidateConcurrently(t *testing.T) {
	s, err := Compile(mustDecode(t, `{"properties": {"a": {"anyOf": [{"type": "string", "pattern": "^x"}, {"$ref": "#/$defs/n"}]}}, "$defs": {"n": {"type": "integer", "minimum": 3}}}`))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for i := range 8 {
		doc := mustDecode(t, fmt.Sprintf(`{"a": %d}`, i))
		go func() {
			err := s.Validate(doc)
			if (i < 3) != (err != nil) {
				err = fmt.Errorf("%d: got %v", i, err)
			} else {
				err = nil
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
