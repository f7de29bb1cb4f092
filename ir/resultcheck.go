package ir

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// ExplainResultError turns the error of validating a result document against its schema into
// one line naming each failing field by its JSON pointer, what is allowed there and what was
// found: `at /verdict: value must be one of "approve", "request-changes", "comment" (got "lgtm")`.
// An error that is not a validation error is returned as it is.
func ExplainResultError(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var parts []string
	for _, leaf := range leaves(ve) {
		loc := "/" + strings.Join(leaf.InstanceLocation, "/")
		if len(leaf.InstanceLocation) == 0 {
			loc = "the top level"
		}
		msg := leaf.ErrorKind.LocalizedString(printer)
		switch k := leaf.ErrorKind.(type) {
		case *kind.Enum:
			msg = "value must be one of " + jsonList(k.Want) + " (got " + jsonText(k.Got) + ")"
		case *kind.Const:
			msg = "value must be " + jsonText(k.Want) + " (got " + jsonText(k.Got) + ")"
		}
		parts = append(parts, fmt.Sprintf("at %s: %s", loc, msg))
	}
	if len(parts) == 0 {
		return err.Error()
	}
	return strings.Join(parts, "; ")
}

func jsonList(vs []any) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = jsonText(v)
	}
	return strings.Join(out, ", ")
}

// jsonText renders a JSON value as JSON, shortened: a result may be large.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}
