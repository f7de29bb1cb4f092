package jsonschema

import (
	"errors"
	"testing"
)

// FuzzValidate: any schema document and any value compile or fail with a *SchemaError, and
// validate or fail with a *ValidationError or the step limit's error, never a panic or a hang.
func FuzzValidate(f *testing.F) {
	f.Add(`{"type": "object", "required": ["a"], "properties": {"a": {"enum": [1, "x"]}}}`, `{"a": 2}`)
	f.Add(`{"$defs": {"n": {"anyOf": [{"$ref": "#/$defs/n"}]}}, "items": {"$ref": "#/$defs/n"}}`, `[1]`)
	f.Add(`{"prefixItems": [{"const": [1]}], "uniqueItems": true, "contains": {"minimum": 1}, "maxContains": 1}`, `[[1], 1, 1.0]`)
	f.Add(`{"$schema": "http://json-schema.org/draft-07/schema#", "items": [true], "additionalItems": false, "$ref": "#/definitions/x", "definitions": {"x": {"not": {}}}}`, `[1, 2]`)
	f.Add(`{"if": {"pattern": "^a"}, "then": {"maxLength": 2}, "else": {"$anchor": "e", "oneOf": [{}, true]}, "propertyNames": {"$ref": "#e"}}`, `"abc"`)
	f.Add(`{"items": {"type": "integer", "enum": [1e400, 2], "multipleOf": 1e-400, "minimum": -1e400}, "uniqueItems": true}`, `[1e400, 10e399, 1e-401, 0.5e401, 1e99999999]`)
	f.Fuzz(func(t *testing.T, schema, doc string) {
		sv, err := Decode([]byte(schema))
		if err != nil {
			return
		}
		s, err := Compile(sv)
		var se *SchemaError
		if err != nil {
			if !errors.As(err, &se) || len(se.Errors) == 0 {
				t.Fatalf("Compile: %T %v, want a *SchemaError with errors", err, err)
			}
			return
		}
		v, err := Decode([]byte(doc))
		if err != nil {
			return
		}
		var ve *ValidationError
		if err := s.Validate(v); err != nil && errors.As(err, &ve) && len(ve.Errors) == 0 {
			t.Fatalf("Validate: a *ValidationError without errors")
		}
	})
}
