//go:build unix

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/substrates/local"
)

// complete runs cobra's hidden __complete command, as the shell scripts do, and returns the
// candidates it prints (without the directive line).
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, errOut := run(t, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %v: exit %d\n%s", args, code, errOut)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, ":") {
			got = append(got, l)
		}
	}
	return got
}

func TestCompletionCompletesValues(t *testing.T) {
	if got := complete(t, "compile", "profiles/hello", "--target", ""); strings.Join(got, ",") != "gh-actions,local,kubernetes" {
		t.Errorf("--target: %v", got)
	}
	if got := complete(t, "init", "--template", ""); len(got) < 6 || got[0] != "hello" {
		t.Errorf("--template: %v", got)
	}
	dir := runnerFleet(t, codexFleet, map[string]string{"skills/develop/SKILL.md": "# develop\n"})
	if got := complete(t, "runner", "--dir", dir, "launch", ""); strings.Join(got, ",") != "develop" {
		t.Errorf("launch: %v", got)
	}
	if got := complete(t, "runner", "--dir", dir, "get", ""); len(got) != 0 {
		t.Errorf("get before any session (no store is made): %v", got)
	}
	if got := local.CompleteSessions(context.Background(), dir, ""); got != nil {
		t.Errorf("sessions of a fresh installation: %v", got)
	}
	// Sessions: launched with the agent replaced by a command that ends at once.
	t.Setenv(local.AgentEnv, `["true"]`)
	var ids []string
	for i := 0; i < 2; i++ {
		code, out, errOut := run(t, "runner", "--dir", dir, "launch", "develop", "--ref", "1")
		if code != 0 {
			t.Fatalf("launch: exit %d\n%s", code, errOut)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	defer settleSessions(t, dir)
	got := complete(t, "runner", "--dir", dir, "cancel", "")
	if len(got) != 2 || !strings.HasPrefix(got[0], ids[1]+"\tdevelop ") || !strings.HasPrefix(got[1], ids[0]+"\tdevelop ") {
		t.Errorf("cancel: %q, want %v most recent first", got, ids)
	}
	if got := complete(t, "runner", "--dir", dir, "logs", ids[0][:2]); len(got) != 1 {
		t.Errorf("logs with a prefix: %q", got)
	}
	if got := complete(t, "runner", "--dir", dir, "get", ids[0], ""); len(got) != 0 {
		t.Errorf("a second argument: %q", got)
	}
	code, out, _ := run(t, "--help")
	if code != 0 || !strings.Contains(out, "  completion ") {
		t.Errorf("completion is not listed:\n%s", out)
	}
}
