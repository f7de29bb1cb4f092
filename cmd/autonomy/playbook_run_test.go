//go:build unix

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/playbook/engine"
)

// TestPlaybookRunResumeAcrossProcesses runs a workflow in one process, and resumes it from
// others: step one's side effect happens once, a used or wrong token is refused, a deny
// cancels with no later side effect.
func TestPlaybookRunResumeAcrossProcesses(t *testing.T) {
	bin := autonomyBin(t)
	ws := t.TempDir()
	db := filepath.Join(t.TempDir(), "state.db")
	wf := `name: gated
steps:
  - id: one
    command: cli sh -c 'echo one >> count; echo "[1,2]"'
    output: json
  - id: gate
    command: cli sh -c 'echo gate >> count'
    approval: required
    prompt: Apply?
  - id: three
    command: cli sh -c 'echo three >> count'
`
	os.WriteFile(filepath.Join(ws, "wf.yml"), []byte(wf), 0o644)
	call := func(wantCode int, args ...string) engine.Envelope {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--state", db)...)
		cmd.Dir = ws
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var env engine.Envelope
		if jerr := json.Unmarshal(out, &env); jerr != nil || code != wantCode {
			t.Fatalf("autonomy %v: exit %d (want %d), %v\n%s", args, code, wantCode, jerr, out)
		}
		return env
	}
	count := func() string {
		b, _ := os.ReadFile(filepath.Join(ws, "count"))
		return strings.Join(strings.Fields(string(b)), ",")
	}
	env := call(0, "playbook", "run", "wf.yml")
	if env.Status != engine.StatusNeedsApproval || count() != "one" {
		t.Fatalf("run: %+v, side effects %s", env, count())
	}
	tok := env.RequiresApproval.ResumeToken
	if env := call(1, "playbook", "resume", "--token", tok+"x", "--approve"); env.Error.Kind != "token" {
		t.Errorf("wrong token: %+v", env.Error)
	}
	env = call(0, "playbook", "resume", "--token", tok, "--approve")
	if env.Status != engine.StatusOK || count() != "one,gate,three" {
		t.Fatalf("resume: %+v, side effects %s (step one must not run again)", env, count())
	}
	if env := call(1, "playbook", "resume", "--token", tok, "--approve"); env.Error.Kind != "token" || count() != "one,gate,three" {
		t.Errorf("reused token: %+v, side effects %s", env.Error, count())
	}

	os.Remove(filepath.Join(ws, "count"))
	tok = call(0, "playbook", "run", "wf.yml").RequiresApproval.ResumeToken
	if env := call(0, "playbook", "resume", "--token", tok, "--deny"); env.Status != engine.StatusCancelled || count() != "one" {
		t.Errorf("deny: %+v, side effects %s", env, count())
	}

	// Hostile input stays argv.
	env = call(0, "playbook", "run", "--pipeline", "cli echo hi; touch pwned")
	if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil || env.Output[0].Stdout != "hi; touch pwned\n" {
		t.Errorf("pwned exists (%v) or output %q", err == nil, env.Output[0].Stdout)
	}
}
