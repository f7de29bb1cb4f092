package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGHControlBadEnv: the control verbs refuse an environment the workflow would never give
// them with exit 2 and the variable to fix, before any request.
func TestGHControlBadEnv(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"gh", "control"}, map[string]string{"GITHUB_REPOSITORY": "o/r", "GH_TOKEN": "t", "AUTONOMY_ITEM": "x"}, `AUTONOMY_ITEM is "x"`},
		{[]string{"gh", "sweep"}, map[string]string{"GITHUB_REPOSITORY": "o/r", "GH_TOKEN": "t", "AUTONOMY_NOW": "yesterday"}, `AUTONOMY_NOW is "yesterday"`},
		{[]string{"gh", "engage"}, map[string]string{"GITHUB_REPOSITORY": "o/r"}, "GH_TOKEN is not set"},
	} {
		for _, k := range []string{"GITHUB_REPOSITORY", "GH_TOKEN", "AUTONOMY_ITEM", "AUTONOMY_NOW", "GITHUB_API_URL", "AUTONOMY_POLICY"} {
			t.Setenv(k, c.env[k])
		}
		code, _, errOut := run(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// TestGHUntrustedTextInTheLog: an ask or a playbook's question with no work item to post on goes
// to the job's log with workflow commands turned off around it, so a line of it such as
// ::add-mask:: or ::stop-commands:: is text; the ask job then fails, naming what is missing.
func TestGHUntrustedTextInTheLog(t *testing.T) {
	dir := t.TempDir()
	hostile := "please\n::add-mask::x\n::stop-commands::y\n::error::z"
	envelope := filepath.Join(dir, "envelope.json")
	b, _ := json.Marshal(map[string]any{"ok": true, "status": "needs_input", "output": map[string]any{"steps": []any{}, "outputs": map[string]string{}},
		"requiresInput": map[string]any{"step": "3", "kind": "input", "prompt": hostile, "options": []string{}, "resumeToken": "rt_secret"}})
	if err := os.WriteFile(envelope, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"AUTONOMY_POLICY", "GITHUB_API_URL", "AUTONOMY_BEHAVIOR"} {
		t.Setenv(k, "")
	}
	t.Setenv("GITHUB_REPOSITORY", "o/r")
	t.Setenv("GH_TOKEN", "t")
	t.Setenv("AUTONOMY_ACTOR", "triage")
	t.Setenv("AUTONOMY_SUBJECT", "")
	t.Setenv("AUTONOMY_ASK", hostile)
	stopRe := regexp.MustCompile(`(?m)^::stop-commands::(autonomy-[0-9a-f]{32})\n`)
	for _, c := range []struct {
		args []string
		code int
	}{{[]string{"gh", "engage"}, 0}, {[]string{"gh", "ask", "--envelope", envelope}, 1}} {
		code, out, errOut := run(t, c.args...)
		m := stopRe.FindStringSubmatchIndex(out)
		if code != c.code || m == nil {
			t.Fatalf("%v: exit %d (want %d)\n%s%s", c.args, code, c.code, out, errOut)
		}
		stop := out[m[2]:m[3]]
		inside, _, closed := strings.Cut(out[m[1]:], "::"+stop+"::\n")
		if !closed || !strings.Contains(inside, hostile) || strings.Contains(out[:m[0]], "::add-mask::") {
			t.Errorf("%v: the text is not inside the stop-commands block:\n%s", c.args, out)
		}
		if strings.Contains(out+errOut, "rt_secret") {
			t.Errorf("%v printed the run's resume token", c.args)
		}
		if c.code == 1 && !strings.Contains(errOut, "no work item") {
			t.Errorf("%v: %s", c.args, errOut)
		}
	}
}
