package local

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// doctor names the git identity the agents will commit as, when a session commits (an actor
// proposes, or works in a worktree), and says how to set one when git has none: a commit then
// fails and the work is not proposed (newc8, from a fresh HOME). A fleet that commits nothing is
// not asked.
func TestDoctorChecksTheGitIdentity(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not on PATH: apt-get install git")
	}
	dir := installFleet(t, skillFleet("codex"), true)
	for _, k := range []string{"user.name", "user.email"} { // the test repository's own
		if out, err := exec.Command("git", "-C", dir, "config", "--local", "--unset-all", k).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	home := t.TempDir()
	// Only configured identities count here, whatever this machine's host name would give.
	base := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.useConfigOnly", "GIT_CONFIG_VALUE_0=true"}
	find := func(env []string, d string) *Check {
		for _, c := range Doctor(context.Background(), d, env) {
			if c.Name == "git identity" {
				return &c
			}
		}
		return nil
	}
	if c := find(base, dir); c == nil || c.OK || !strings.Contains(c.Fix, "git config --global user.email") || c.Detail == "" {
		t.Errorf("no identity: %+v", c)
	}
	named := append(base, "GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com")
	if c := find(named, dir); c == nil || !c.OK || c.Detail != "Ada <ada@example.com>" {
		t.Errorf("with an identity: %+v", c)
	}
	quiet := installFleet(t, fleet{yml: "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  job:\n    behavior: scripts/job.sh\n    triggers: [{ dispatch: true }]\n",
		files: map[string]string{"scripts/job.sh": "#!/bin/sh\n" + scriptDone}}, true)
	if c := find(base, quiet); c != nil {
		t.Errorf("a fleet that commits nothing was checked: %+v", c)
	}
}
