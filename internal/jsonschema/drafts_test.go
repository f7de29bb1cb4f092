package jsonschema

import (
	"strings"
	"testing"

	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// draftCases are schemas whose keywords some drafts define and others do not, each with values
// on both sides of them.
var draftCases = []struct{ schema, docs string }{
	{`{"$schema": "http://json-schema.org/draft-07/schema#", "contains": {"type": "integer"}, "minContains": 0}`, `[] [1] ["a"]`},
	{`{"$schema": "http://json-schema.org/draft-06/schema#", "contains": {"type": "integer"}, "minContains": 0}`, `[] [1]`},
	{`{"$schema": "https://json-schema.org/draft/2019-09/schema", "contains": {"type": "integer"}, "minContains": 0}`, `[] [1]`},
	{`{"$schema": "http://json-schema.org/draft-07/schema#", "contains": {"type": "integer"}, "maxContains": 1}`, `[1, 2] [1] []`},
	{`{"contains": {"type": "integer"}, "maxContains": 1}`, `[1, 2] [1]`},
	{`{"$schema": "http://json-schema.org/draft-07/schema#", "dependentRequired": {"a": ["b"]}}`, `{"a": 1} {"a": 1, "b": 2}`},
	{`{"$schema": "https://json-schema.org/draft/2019-09/schema", "dependentRequired": {"a": ["b"]}}`, `{"a": 1} {"a": 1, "b": 2}`},
	{`{"$schema": "http://json-schema.org/draft-07/schema#", "dependentSchemas": {"a": {"required": ["b"]}}}`, `{"a": 1} {"a": 1, "b": 2}`},
	{`{"dependentSchemas": {"a": {"required": ["b"]}}}`, `{"a": 1} {"a": 1, "b": 2}`},
	{`{"$schema": "http://json-schema.org/draft-07/schema#", "dependencies": {"a": ["b"], "c": {"required": ["d"]}}}`, `{"a": 1} {"c": 1} {"a": 1, "b": 2, "c": 3, "d": 4}`},
	{`{"$schema": "http://json-schema.org/draft-06/schema#", "if": {"type": "string"}, "then": {"minLength": 3}, "else": {"type": "integer"}}`, `"ab" 1.5 "abc" 1`},
	{`{"$schema": "http://json-schema.org/draft-07/schema#", "if": {"type": "string"}, "then": {"minLength": 3}, "else": {"type": "integer"}}`, `"ab" 1.5 "abc" 1`},
	{`{"$schema": "http://json-schema.org/draft-07/schema#", "additionalItems": false}`, `[1, 2] []`},
	{`{"$schema": "https://json-schema.org/draft/2019-09/schema", "additionalItems": {"type": "string"}}`, `[1] ["a"]`},
	{`{"$schema": "http://json-schema.org/draft-07/schema#", "items": {"type": "integer"}, "additionalItems": false}`, `[1, 2] ["a"]`},
	{`{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "integer"}], "additionalItems": false}`, `[1, 2] [1] ["a"]`},
	{`{"$schema": "https://json-schema.org/draft/2020-12/schema", "additionalItems": false}`, `[1, 2]`},
	{`{"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "#/definitions/s", "type": "integer", "definitions": {"s": {"type": "string"}}}`, `"a" 1`},
	{`{"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "#/definitions/s", "enum": [1], "minLength": 5, "definitions": {"s": {}}}`, `"a" 1 2`},
	{`{"$schema": "http://json-schema.org/draft-06/schema#", "properties": {"a": {"$ref": "#/definitions/n", "maximum": 0}}, "definitions": {"n": {"minimum": 1}}}`, `{"a": 5} {"a": 0}`},
	{`{"$schema": "https://json-schema.org/draft/2019-09/schema", "$ref": "#/$defs/s", "type": "integer", "$defs": {"s": {"minimum": 1}}}`, `"a" 1 0 1.5`},
	{`{"$ref": "#/$defs/s", "const": 2, "$defs": {"s": {"minimum": 1}}}`, `2 3 0`},
}

// TestDraftsAgreeWithSanthosh: each keyword applies only in the drafts that define it, as
// santhosh-tekuri/jsonschema (a validator that passes the JSON Schema test suite) has it.
func TestDraftsAgreeWithSanthosh(t *testing.T) {
	for _, c := range draftCases {
		ours, err := Compile(mustDecode(t, c.schema))
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		sdoc, err := santhosh.UnmarshalJSON(strings.NewReader(c.schema))
		if err != nil {
			t.Fatal(err)
		}
		sc := santhosh.NewCompiler()
		if err := sc.AddResource("schema.json", sdoc); err != nil {
			t.Fatal(err)
		}
		theirs, err := sc.Compile("schema.json")
		if err != nil {
			t.Fatalf("santhosh: %s: %v", c.schema, err)
		}
		for _, doc := range jsonDocs(t, c.docs) {
			v, err := santhosh.UnmarshalJSON(strings.NewReader(doc))
			if err != nil {
				t.Fatal(err)
			}
			want := theirs.Validate(v) == nil
			if got := ours.Validate(mustDecode(t, doc)) == nil; got != want {
				t.Errorf("%s against %s: valid %v, santhosh says %v", c.schema, doc, got, want)
			}
		}
	}
}

// TestRefSiblingsAreIgnoredBeforeDraft2019: draft 07 and 06 say a $ref's siblings are ignored;
// santhosh-tekuri applies const, contains, propertyNames and if/then/else beside one, so these are
// checked against the drafts' text.
func TestRefSiblingsAreIgnoredBeforeDraft2019(t *testing.T) {
	for _, draft := range []string{"http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-06/schema#"} {
		schema := `{"$schema": "` + draft + `", "$ref": "#/definitions/s", "const": 2, "contains": false, "propertyNames": false, "definitions": {"s": {"minimum": 1}}}`
		same(t, draft+" siblings", validate(t, schema, `1`), nil)
		same(t, draft+" target", validate(t, schema, `0`), []string{"at /: minimum: got 0, want 1"})
	}
	same(t, "2019-09 siblings", validate(t, `{"$schema": "https://json-schema.org/draft/2019-09/schema", "$ref": "#/$defs/s", "const": 2, "$defs": {"s": {"minimum": 1}}}`, `1`), []string{"at /: value must be 2"})
}

// jsonDocs splits space-separated JSON values (none holding a space outside a string).
func jsonDocs(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	depth, start, inString := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ' ' && depth == 0:
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return append(out, s[start:])
}
