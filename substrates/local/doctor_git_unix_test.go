//go:build unix

package local

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// doctor says when the repository the installation is in has no commit yet: every session that
// needs a worktree, the code flow, and a playbook reading the history fail then, while doctor
// said all was well (newc9, release-gate on a fresh repository). Outside a repository, nothing.
func TestDoctorChecksTheRepositoryHasACommit(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	find := func(dir string) *Check {
		for _, c := range Doctor(context.Background(), dir, env) {
			if c.Name == "git repository" {
				return &c
			}
		}
		return nil
	}
	dir := installFleet(t, flowFleet, false) // its proposers work in worktrees
	if c := find(dir); c != nil {
		t.Errorf("outside a repository: %+v", c)
	}
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// A fix: the proposers' worktrees start from a commit (attack28: a note let doctor exit 0).
	if c := find(dir); c == nil || c.OK || c.Detail != dir+" has no commit yet" || !strings.Contains(c.Fix, `git commit --allow-empty -m "first commit"`) {
		t.Errorf("a repository with no commit: %+v", c)
	}
	if c := find(installFleet(t, flowFleet, true)); c == nil || !c.OK || c.Fix != "" {
		t.Errorf("a repository with a commit: %+v", c)
	}
	if c := find(installFleet(t, editedFleet, true)); c != nil {
		t.Errorf("a fleet that needs no commit was checked: %+v", c)
	}
}
