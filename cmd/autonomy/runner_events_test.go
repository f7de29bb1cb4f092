//go:build unix

package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// TestRunnerGetShowsEvents: what the runner did with a session's worktree is said in an event,
// and runner get shows it (text and JSON): a session that leaves uncommitted changes in its
// isolated worktree has it kept, and get says where.
func TestRunnerGetShowsEvents(t *testing.T) {
	t.Parallel()
	dir := runnerFleet(t, `schema: autonomy.ir.v1
targets: [local]
actors:
  scribble:
    behavior: scripts/scribble.sh
    execution: { workspace: isolated }
    triggers: [{ dispatch: true }]
`, map[string]string{"scripts/scribble.sh": "#!/bin/sh\necho draft > notes.txt\n"})
	gitCommitAll(t, dir)
	out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "scribble")
	if code != 0 {
		t.Fatalf("launch: %d %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	waitStore(t, st, id, "its worktree event", func(s store.Session, es []store.Event) bool {
		for _, e := range es {
			if e.Kind == "worktree" {
				return true
			}
		}
		return false
	})
	out, errOut, code = cli(t, nil, "runner", "--dir", dir, "get", id)
	if code != 0 || !strings.Contains(out, "\nevents:\n") || !strings.Contains(out, "  worktree  ") || !strings.Contains(out, "kept") {
		t.Fatalf("get: %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = cli(t, nil, "runner", "--dir", dir, "get", id, "--format", "json")
	var v struct {
		Events []struct{ Kind, Message string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("get --format json: %d\n%s\n%s", code, out, errOut)
	}
	found := false
	for _, e := range v.Events {
		found = found || e.Kind == "worktree" && strings.Contains(e.Message, "kept")
	}
	if !found {
		t.Errorf("get --format json has no worktree event:\n%s", out)
	}
}

// gitCommitAll makes dir a git repository on branch main whose one commit holds its files.
func gitCommitAll(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.email", "t@example.com"},
		{"config", "user.name", "t"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// TestRunnerLaunchRefusesABranchCheckedOutElsewhere: --branch naming the branch the repository
// itself has checked out, or one another worktree has, is refused at launch (exit 2, no session)
// with a hint that fits: never to remove the repository's own worktree.
func TestRunnerLaunchRefusesABranchCheckedOutElsewhere(t *testing.T) {
	t.Parallel()
	dir := runnerFleet(t, trivialFleet, map[string]string{"scripts/work.sh": "#!/bin/sh\nexit 0\n"})
	gitCommitAll(t, dir)
	other := filepath.Join(t.TempDir(), "other")
	if out, err := exec.Command("git", "-C", dir, "worktree", "add", "-q", "-b", "feature", other).CombinedOutput(); err != nil {
		t.Fatalf("git worktree add: %v\n%s", err, out)
	}
	real := func(p string) string { r, _ := filepath.EvalSymlinks(p); return r } // as git names it
	cases := []struct{ branch, want, not string }{
		{"main", "is checked out in the repository itself, " + real(dir) + ",", "git worktree remove"},
		{"feature", "is checked out in the worktree " + real(other) + ",", "repository itself"},
	}
	for _, c := range cases {
		out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "worker", "--branch", c.branch)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) || strings.Contains(errOut, c.not) {
			t.Errorf("--branch %s: exit %d\n%s\n%s", c.branch, code, out, errOut)
		}
	}
	if out, _, _ := cli(t, nil, "runner", "--dir", dir, "list", "--all"); strings.Count(out, "\n") != 1 {
		t.Errorf("a session was recorded:\n%s", out)
	}
}
