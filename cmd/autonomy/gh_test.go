package main

import (
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
