package ir

import (
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
