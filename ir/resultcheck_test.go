package ir

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/autonomyhq/autonomy/internal/jsonschema"
)

func TestExplainResultError(t *testing.T) {
	sch, err := CompileResultSchema(&Result{Named: String{Value: ReviewContract}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ doc, want string }{
		{`{"verdict": "lgtm", "summary": "ok", "headSha": "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}`, `at /verdict: value must be one of "approve", "request-changes", "comment" (got "lgtm")`},
		{`{"verdict": "approve", "headSha": "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}`, `at the top level: missing property 'summary'`},
		{`{"verdict": "approve", "summary": "ok"}`, `at the top level: missing property 'headSha'`},
		{`{"verdict": "approve", "summary": "ok", "headSha": "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "findings": [{"message": "m", "line": 0}]}`, `at /findings/0/line: minimum: got 0, want 1`},
		{`{"verdict": "approve", "summary": "ok", "headSha": "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "findings": [{"message": "m", "severity": "huge"}]}`, `at /findings/0/severity: value must be one of "blocker", "major", "minor", "nit" (got "huge")`},
	} {
		doc, err := jsonschema.Decode([]byte(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		got := ExplainResultError(sch.Validate(doc))
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.doc, got, c.want)
		}
	}
}

// TestExplainResultErrorOfInlineSchemas: a const of any JSON value is shown as JSON, and a long
// enum lists ten values and counts the rest.
func TestExplainResultErrorOfInlineSchemas(t *testing.T) {
	enum := make([]any, 50)
	for i := range enum {
		enum[i] = fmt.Sprint("v", i)
	}
	for _, c := range []struct {
		schema map[string]any
		doc    string
		want   string
	}{
		{map[string]any{"const": []any{"a", json.Number("1")}}, `["a"]`, `at the top level: value must be ["a",1] (got ["a"])`},
		{map[string]any{"properties": map[string]any{"v": map[string]any{"enum": enum}}}, `{"v": "x"}`, `at /v: value must be one of "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", and 40 more (got "x")`},
	} {
		sch, err := CompileResultSchema(&Result{Inline: c.schema})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.Decode([]byte(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := ExplainResultError(sch.Validate(doc)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.doc, got, c.want)
		}
	}
}
