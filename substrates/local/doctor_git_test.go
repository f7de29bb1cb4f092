package local

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
	gitconfig := filepath.Join(home, ".gitconfig")
	if err := os.WriteFile(gitconfig, []byte("[user]\n\tuseConfigOnly = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"PATH=/usr/bin:/bin", "HOME=" + home}
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
	// What the shell exports and a session does not receive is no identity of the session's
	// (attack24: doctor said ok, every commit failed); a committer without an author neither.
	exported := append(base, "GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com", "EMAIL=ada@example.com")
	if c := find(exported, dir); c == nil || c.OK {
		t.Errorf("an identity only exported: %+v", c)
	}
	if err := os.WriteFile(gitconfig, []byte("[user]\n\tuseConfigOnly = true\n\tname = Ada\n\temail = ada@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := find(base, dir); c == nil || !c.OK || c.Detail != "Ada <ada@example.com>" {
		t.Errorf("with an identity: %+v", c)
	}
	quiet := installFleet(t, fleet{yml: "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  job:\n    behavior: scripts/job.sh\n    triggers: [{ dispatch: true }]\n",
		files: map[string]string{"scripts/job.sh": "#!/bin/sh\n" + scriptDone}}, true)
	if c := find(base, quiet); c != nil {
		t.Errorf("a fleet that commits nothing was checked: %+v", c)
	}
}
