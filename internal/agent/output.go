package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Extract reads what a claude-json preset printed: its final message, and its structured result
// (nil when it gave none). An error result (is_error) is an error carrying the message.
func Extract(out []byte) (message string, structured json.RawMessage, err error) {
	// The result object is the last JSON value printed; anything before it is not ours to judge.
	out = bytes.TrimSpace(out)
	if i := bytes.LastIndex(out, []byte("\n{")); i >= 0 {
		out = out[i+1:]
	}
	var r struct {
		Type       string          `json:"type"`
		Subtype    string          `json:"subtype"`
		IsError    bool            `json:"is_error"`
		Result     string          `json:"result"`
		Structured json.RawMessage `json:"structured_output"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return "", nil, fmt.Errorf("the agent's output is not its JSON result: %v", err)
	}
	if r.Type != "result" {
		return "", nil, fmt.Errorf("the agent's output is a %q, not its result", r.Type)
	}
	if r.IsError {
		return r.Result, nil, fmt.Errorf("the agent ended with an error (%s): %s", r.Subtype, r.Result)
	}
	if len(r.Structured) == 0 || string(r.Structured) == "null" {
		r.Structured = nil
	}
	return r.Result, r.Structured, nil
}
