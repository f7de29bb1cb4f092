package engine

import (
	"strings"
	"testing"
)

// TestReadRequest: seed 003's JSON request reads into the engine's request, and every hostile or
// malformed request is refused with the line and column or the member, and the fix.
func TestReadRequest(t *testing.T) {
	rr, err := ReadRequest(strings.NewReader(`{"action": "run", "pipeline": "flows/x.yml", "argsJson": "{\"tag\":\"work\"}", "cwd": "sub", "timeoutMs": 1000, "maxOutputBytes": 2048}`))
	if err != nil {
		t.Fatal(err)
	}
	req, err := rr.Engine("/ws")
	if err != nil || req.Pipeline != "flows/x.yml" || req.ArgsJSON != `{"tag":"work"}` || req.Cwd != "sub" || req.TimeoutMs != 1000 || req.MaxOutputBytes != 2048 || req.Workspace != "/ws" {
		t.Fatalf("%+v %v", req, err)
	}
	// argsJson as an object; the limits default.
	rr, _ = ReadRequest(strings.NewReader(`{"action": "run", "pipeline": "cli true", "argsJson": {"a": 1}}`))
	if req, err = rr.Engine("."); err != nil || req.ArgsJSON != `{"a": 1}` || req.TimeoutMs != DefaultTimeoutMs || req.MaxOutputBytes != DefaultMaxOutputBytes {
		t.Fatalf("%+v %v", req, err)
	}
	if rr, err := ReadRequest(strings.NewReader(`{"action": "resume", "token": "rt_x", "approve": false}`)); err != nil || rr.Token != "rt_x" || *rr.Approve {
		t.Fatalf("resume: %+v %v", rr, err)
	}
	for in, want := range map[string]string{
		``: "request: empty",
		`{"action": "run",` + "\n" + ` "pipeline": }`:              "request:2:14: invalid character",
		`{"action": "run", "pipelin": "x"}`:                        `unknown member "pipelin": the members are action, approve, argsJson`,
		`{"action": "run", "pipeline": "x", "timeoutMs": "5"}`:     `"timeoutMs" must be a whole number, not a JSON string`,
		`{"action": "run", "pipeline": "x", "timeoutMs": 0}`:       `"timeoutMs" must be from 1 to 604800000, not 0`,
		`{"action": "run", "pipeline": "x", "maxOutputBytes": -1}`: `"maxOutputBytes" must be from 1 to`,
		`{"action": "run", "pipeline": "x", "argsJson": "[1]"}`:    `"argsJson" must be a JSON object`,
		`{"action": "run", "pipeline": "x", "token": "rt_x"}`:      `"token" and "approve" are resume's`,
		`{"action": "run"}`:                     `"pipeline" is missing`,
		`{"action": "resume", "token": "rt_x"}`: `a resume needs "token"`,
		`{"action": "resume", "token": "t", "approve": true, "pipeline": "x"}`: `a resume takes action, token, approve only`,
		`{"action": "stop"}`:                    `"action" is "stop": give "run" or "resume"`,
		`{"pipeline": "x"}`:                     `"action" is missing`,
		`{"action": "run", "pipeline": "x"} {}`: `request:1:36: one JSON object per request`,
		`["run"]`:                               `request:1:1: the request must be a JSON object, not a JSON array`,
		`{"action": "run", "pipeline": "x", "approve": 1}`: `"approve" must be true or false`,
	} {
		_, err := ReadRequest(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	huge := `{"action": "run", "pipeline": "` + strings.Repeat("x", MaxRequestBytes) + `"}`
	if _, err := ReadRequest(strings.NewReader(huge)); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("a huge request: %v", err)
	}
}
