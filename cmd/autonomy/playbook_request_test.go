package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runStdin calls Run with stdin.
func runStdin(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestPlaybookRunRequest: seed 003's JSON request on stdin drives a run to its approval gate
// and a resume past it, each answered with the envelope; a request that does not read is an
// envelope with ok false naming where; flags the request carries are refused beside it.
func TestPlaybookRunRequest(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.db")
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	flow := filepath.Join(dir, "flow.yml")
	if err := os.WriteFile(flow, []byte("name: f\nargs:\n  tag: {default: x}\nsteps:\n  - id: where\n    command: cli pwd\n  - id: gate\n    command: cli echo $args.tag\n    approval: required\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := `{"action": "run", "pipeline": "` + flow + `", "argsJson": "{\"tag\":\"work\"}", "cwd": "sub", "timeoutMs": 5000, "maxOutputBytes": 4096}`
	code, out, errOut := runStdin(t, req, "playbook", "run", "--request", "-", "--state", state, "--workspace", ws)
	var env struct {
		OK               bool   `json:"ok"`
		Status           string `json:"status"`
		Output           []struct{ ID, Status, Stdout string }
		RequiresApproval *struct{ ResumeToken string }
		Error            *struct{ Kind, Message string }
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil || code != 0 || env.Status != "needs_approval" || env.RequiresApproval == nil {
		t.Fatalf("run: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	if got := strings.TrimSpace(env.Output[0].Stdout); !strings.HasSuffix(got, "/ws/sub") {
		t.Errorf("the request's cwd did not apply: the step ran in %q", got)
	}
	resume := `{"action": "resume", "token": "` + env.RequiresApproval.ResumeToken + `", "approve": true}`
	code, out, _ = runStdin(t, resume, "playbook", "run", "--request", "-", "--state", state)
	env.RequiresApproval = nil
	if err := json.Unmarshal([]byte(out), &env); err != nil || code != 0 || env.Status != "ok" || strings.TrimSpace(env.Output[1].Stdout) != "work" {
		t.Fatalf("resume: exit %d %v\n%s", code, err, out)
	}
	// The same request from a file.
	file := filepath.Join(dir, "req.json")
	os.WriteFile(file, []byte(`{"action": "run", "pipeline": "cli echo hi"}`), 0o644)
	if code, out, _ := run(t, "playbook", "run", "--request", file, "--state", state); code != 0 || !strings.Contains(out, `"stdout": "hi\n"`) {
		t.Fatalf("from a file: exit %d\n%s", code, out)
	}
	// A bad request is an envelope with ok false.
	code, out, _ = runStdin(t, "{\"action\": \"run\",\n \"timeoutMs\": true}", "playbook", "run", "--request", "-", "--state", state)
	env.Error = nil
	if err := json.Unmarshal([]byte(out), &env); err != nil || code != 1 || env.OK || env.Error == nil || env.Error.Kind != "invalid" || !strings.Contains(env.Error.Message, "request:2:2:") {
		t.Fatalf("a bad request: exit %d %v\n%s", code, err, out)
	}
	// The flags the request carries are refused beside it.
	for _, args := range [][]string{{"--timeout-ms", "5"}, {"--pipeline", "cli true"}, {"--args-json", "{}"}, {flow}} {
		code, _, errOut := runStdin(t, req, append([]string{"playbook", "run", "--request", "-", "--state", state}, args...)...)
		if code != 2 || !strings.Contains(errOut, "--request") {
			t.Errorf("%v beside --request: exit %d: %s", args, code, errOut)
		}
	}
}

// TestPlaybookRunCLIFlags: --cli-allow and --cli-deny are policy.box.cli for a run outside an
// installation; a path is no program name.
func TestPlaybookRunCLIFlags(t *testing.T) {
	state := filepath.Join(t.TempDir(), "s.db")
	code, out, _ := run(t, "playbook", "run", "--pipeline", "cli rm -f nothing", "--state", state, "--cli-deny", "rm")
	if code != 1 || !strings.Contains(out, `the program \"rm\" is denied by policy.box.cli.deny`) {
		t.Fatalf("--cli-deny: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "playbook", "run", "--pipeline", "cli true", "--state", state, "--cli-allow", "true,echo")
	if code != 0 {
		t.Fatalf("--cli-allow: exit %d\n%s", code, out)
	}
	if code, _, errOut := run(t, "playbook", "run", "--pipeline", "cli true", "--state", state, "--cli-allow", "/bin/true"); code != 2 || !strings.Contains(errOut, "not a program name") {
		t.Fatalf("a path: exit %d %s", code, errOut)
	}
}
