package gitws

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestVersionError(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		out  string
		want string // "" for accepted
	}{
		{"git version 2.39.5", ""},
		{"git version 2.17.0", ""},
		{"git version 3.0.0", ""},
		{"git version 2.39.3 (Apple Git-146)\n", ""},
		{"git version 2.41.0.windows.1", ""},
		{"git version 2.16.6", "git 2.16 is too old: isolated workspaces need git 2.17 or later"},
		{"git version 1.9.1", "git 1.9 is too old"},
		{"git version 2", `cannot tell the version of git from "git version 2"`},
		{"hub version 2.14", "cannot tell the version of git"},
		{"", "cannot tell the version of git"},
	} {
		err := versionError(c.out)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.out, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want %q", c.out, err, c.want)
		}
	}
}

// TestOldGitRefused puts a git 2.16 on PATH: Repo and Add refuse, saying which version is needed.
func TestOldGitRefused(t *testing.T) {
	repo, trees := newRepo(t) // with the real git
	bin := t.TempDir()
	fake := "#!/bin/sh\necho 'git version 2.16.6'\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	resetVersionCheck(t)
	if _, err := Repo(repo); err == nil || !strings.Contains(err.Error(), "git 2.16 is too old: isolated workspaces need git 2.17 or later") {
		t.Errorf("Repo with git 2.16: %v", err)
	}
	if _, err := Add(context.Background(), repo, filepath.Join(trees, "x"), ""); err == nil || !strings.Contains(err.Error(), "too old") {
		t.Errorf("Add with git 2.16: %v", err)
	}
	if exists(filepath.Join(trees, "x")) {
		t.Error("Add with an old git created the worktree")
	}
}

func resetVersionCheck(t *testing.T) {
	t.Helper()
	reset := func() {
		versionCheck.Lock()
		versionCheck.done, versionCheck.err = false, nil
		versionCheck.Unlock()
	}
	reset()
	t.Cleanup(reset)
}

// TestHelperLock is not a test: it is the body of the process TestLockAcrossProcesses starts. It
// takes the worktree lock of the git directory LOCK_TEST_DIR, says so, holds it a while, and exits.
func TestHelperLock(t *testing.T) {
	dir := os.Getenv("LOCK_TEST_DIR")
	if dir == "" {
		return
	}
	unlock, err := lockWorktrees(context.Background(), dir)
	if err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(1)
	}
	os.WriteFile(filepath.Join(dir, "held"), nil, 0o600)
	time.Sleep(500 * time.Millisecond)
	os.WriteFile(filepath.Join(dir, "released"), nil, 0o600)
	unlock()
	os.Exit(0)
}

// TestLockAcrossProcesses: while another process holds a repository's worktree lock, this one
// waits for it, and a cancelled wait says who holds it.
func TestLockAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLock$")
	cmd.Env = append(os.Environ(), "LOCK_TEST_DIR="+dir)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	for deadline := time.Now().Add(30 * time.Second); !exists(filepath.Join(dir, "held")); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the helper never took the lock: %s", out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := lockWorktrees(ctx, dir); err == nil || !strings.Contains(err.Error(), "held by another autonomy process") {
		t.Errorf("a lock held by another process was taken, or the wait ended without saying why: %v", err)
	}
	unlock, err := lockWorktrees(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if !exists(filepath.Join(dir, "released")) {
		t.Error("took the lock while the other process still held it")
	}
}
