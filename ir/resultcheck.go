package ir

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/autonomyhq/autonomy/internal/jsonschema"
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
		msg := leaf.Message
		switch want, isList := leaf.Want.([]any); {
		case leaf.Keyword == "enum" && isList:
			msg = "value must be one of " + jsonList(want) + " (got " + jsonText(leaf.Got) + ")"
		case leaf.Keyword == "const":
			msg = "value must be " + jsonText(leaf.Want) + " (got " + jsonText(leaf.Got) + ")"
		}
		parts = append(parts, fmt.Sprintf("at %s: %s", loc, msg))
	}
	if len(parts) == 0 {
		return err.Error()
	}
	return strings.Join(parts, "; ")
}

// maxListed is how many allowed values a message lists before it counts the rest: an enum may
// be long.
const maxListed = 10

func jsonList(vs []any) string {
	out := make([]string, 0, min(len(vs), maxListed)+1)
	for i, v := range vs {
		if i == maxListed {
			out = append(out, fmt.Sprintf("and %d more", len(vs)-maxListed))
			break
		}
		out = append(out, jsonText(v))
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
