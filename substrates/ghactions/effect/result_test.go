package effect

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
)

// The apply job's verdict on a run of an actor with the default contract: done only with a
// result that validates and says done, from submit_result (a refused call does not count) or
// else the exported final message; otherwise a NoResult naming what is missing or invalid.
func TestVerifyResult(t *testing.T) {
	submitted := func(input string, refused string) Applied {
		return Applied{Effect: tools.Effect{Tool: tools.SubmitResult, Actor: "pm", Input: json.RawMessage(input)}, Refused: refused}
	}
	comment := Applied{Effect: tools.Effect{Tool: tools.Comment, Actor: "pm", Input: json.RawMessage(`{"item":"1","body":"hi"}`)}}
	for _, c := range []struct {
		name    string
		applied []Applied
		file    string // the exported result file's content; "" for none
		want    string // a part of the NoResult; "" for done
	}{
		{"submitted", []Applied{comment, submitted(`{"status":"done","summary":"Triaged #1.","done":["commented"]}`, "")}, "", ""},
		{"final message", []Applied{comment}, `{"status": "done", "summary": "Triaged #1."}`, ""},
		{"nothing", []Applied{comment}, "", "the session delivered no result"},
		{"empty file", nil, "\n", "the session delivered no result"},
		{"refused call only", []Applied{submitted(`{"status":"done","summary":"x"}`, "over its cap")}, "", "the session delivered no result"},
		{"prose", nil, "All done!", "the result is not JSON"},
		{"missing summary", nil, "{\n  \"status\": \"done\"\n}", "1:1: the result does not satisfy autonomy.result.v1: at /: missing property 'summary'"},
		{"bad status", []Applied{submitted(`{"status":"finished","summary":"x"}`, "")}, "", "submit_result:1:11: the result does not satisfy autonomy.result.v1: at /status"},
		{"reported failed", []Applied{submitted(`{"status":"failed","summary":"The channel is gone."}`, "")}, "", "the agent reported its work failed: The channel is gone."},
		// The schema reads the exact key "status": a "Status" beside it is refused, never read.
		{"case-folded status", nil, `{"status":"failed","summary":"I could not do it","Status":"done"}`, `1:50: the result does not satisfy autonomy.result.v1: key "Status" in the top-level object repeats "status"`},
		{"case-folded status submitted", []Applied{submitted(`{"status":"failed","summary":"I could not do it","STATUS":"done"}`, "")}, "", `key "STATUS" in the top-level object repeats "status"`},
		{"repeated status", nil, `{"status":"failed","summary":"I could not do it","status":"done"}`, `key "status" in the top-level object repeats "status"`},
	} {
		t.Run(c.name, func(t *testing.T) { verdict(t, ir.DefaultResult, c.applied, c.file, c.want) })
	}
	// An actor with no contract to verify (one that opts out, or a reviewer) is not verified by apply.
	if err := VerifyResult(nil, nil, filepath.Join(t.TempDir(), "none")); err != nil {
		t.Errorf("an actor with no contract: %v", err)
	}
}

// A declared contract (here inline) is verified as the default one: submit_result's output
// member, else the exported result file, must validate, the failure naming the field; the
// default contract's status is not asked of it.
func TestVerifyDeclaredResult(t *testing.T) {
	inline := &ir.Result{Inline: map[string]any{"type": "object", "required": []any{"labels"},
		"properties": map[string]any{"labels": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}}}
	submitted := func(input string) Applied {
		return Applied{Effect: tools.Effect{Tool: tools.SubmitResult, Actor: "triage", Input: json.RawMessage(input)}}
	}
	for _, c := range []struct {
		name    string
		applied []Applied
		file    string
		want    string
	}{
		{"output", []Applied{submitted(`{"status":"done","summary":"x","output":{"labels":["bug"]}}`)}, "", ""},
		{"file", nil, `{"labels": []}`, ""},
		{"bad output", []Applied{submitted(`{"status":"done","summary":"x","output":{"labels":[3]}}`)}, "", "submit_result's output:1:12: the result does not satisfy its inline schema: at /labels/0"},
		{"missing field", nil, "{\"status\": \"done\", \"summary\": \"x\"}", "at /: missing property 'labels'"},
		{"submit without output", []Applied{submitted(`{"status":"done","summary":"x"}`)}, "", "the session delivered no result"},
		// The output validated is the output read: a case twin of it is refused, not picked.
		{"output twin", []Applied{submitted(`{"status":"done","summary":"x","output":{"labels":["bug"]},"Output":{"labels":[3]}}`)}, "", `key "Output" in the top-level object`},
		{"output spelled otherwise", []Applied{submitted(`{"status":"done","summary":"x","OUTPUT":{"labels":["bug"]}}`)}, "", "the session delivered no result"},
	} {
		t.Run(c.name, func(t *testing.T) { verdict(t, inline, c.applied, c.file, c.want) })
	}
}

// verdict checks VerifyResult's verdict on a run that applied applied and exported file ("" for
// no result file): done for want "", else a NoResult containing want.
func verdict(t *testing.T, contract *ir.Result, applied []Applied, file, want string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), ResultFile)
	if file != "" {
		if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := VerifyResult(contract, applied, path)
	var none *NoResult
	switch {
	case want == "" && err != nil:
		t.Fatalf("not done: %v", err)
	case want != "" && (!errors.As(err, &none) || !strings.Contains(err.Error(), want)):
		t.Fatalf("got %v, want a NoResult with %q", err, want)
	}
}
