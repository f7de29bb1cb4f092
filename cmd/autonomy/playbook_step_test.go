package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPlaybookStepUsage: without a step, or with one that is not JSON, or with data that is not
// what a job hands on, `playbook step` exits 2 saying why; a step of a namespace it cannot run
// fails it (exit 1).
func TestPlaybookStepUsage(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data.json")
	for _, c := range []struct {
		step, seed, want string
		code             int
	}{
		{"", "", "AUTONOMY_PLAYBOOK_STEP is not set", 2},
		{"{", "", "is not a step", 2},
		{`{"id":"a","namespace":"cli","argv":["true"],"steps":["a"]}`, "not base64!", "not base64", 2},
		{`{"id":"a","namespace":"mcp","argv":["x"],"steps":["a"]}`, "", "mcp steps are not supported", 1},
	} {
		t.Setenv(playbookStepEnv, c.step)
		t.Setenv(playbookDataEnv, c.seed)
		t.Setenv("GITHUB_OUTPUT", "")
		t.Setenv("GITHUB_STEP_SUMMARY", "")
		code, out, errOut := run(t, "playbook", "step", "--data", data)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("step %q seed %q: exit %d\n%s%s", c.step, c.seed, code, out, errOut)
		}
	}
}
