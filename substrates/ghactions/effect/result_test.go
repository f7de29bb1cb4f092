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
	actor := InstalledActor{Name: "pm", Result: ir.DefaultContract}
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
		// The schema reads the exact key "status": a "Status" beside it does not make failed done.
		{"case-folded status", nil, `{"status":"failed","summary":"I could not do it","Status":"done"}`, "the agent reported its work failed: I could not do it"},
		{"case-folded status submitted", []Applied{submitted(`{"status":"failed","summary":"I could not do it","STATUS":"done"}`, "")}, "", "the agent reported its work failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), ResultFile)
			if c.file != "" {
				if err := os.WriteFile(file, []byte(c.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := VerifyResult(actor, c.applied, file)
			var none *NoResult
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("not done: %v", err)
			case c.want != "" && (!errors.As(err, &none) || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want a NoResult with %q", err, c.want)
			}
		})
	}
	// An actor without the default contract (one that declares its own, or opts out) is not
	// verified by apply.
	if err := VerifyResult(InstalledActor{Name: "reviewer"}, nil, filepath.Join(t.TempDir(), "none")); err != nil {
		t.Errorf("an actor with no default contract: %v", err)
	}
}
