package ghfake

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// behindHost is a code host whose main renamed a.txt to b.txt after feature (an edit of a.txt)
// and conflict (a rewrite of a.txt's line, while main rewrites it too) forked from it.
func behindHost(t *testing.T) *Server {
	t.Helper()
	dir := t.TempDir()
	bare, work := filepath.Join(dir, "origin.git"), filepath.Join(dir, "w")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		if args[0] == "init" || args[0] == "clone" {
			cmd.Dir = dir
		}
		cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(work, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "--quiet", "--bare", bare)
	git("clone", "--quiet", bare, work)
	write("a.txt", "one\ntwo\nthree\nfour\n")
	git("add", "a.txt")
	git("commit", "--quiet", "-m", "a")
	git("push", "--quiet", "origin", "HEAD:refs/heads/main")
	write("a.txt", "one\ntwo\nthree\nfour\nfive: the feature\n")
	git("commit", "--quiet", "-am", "feature")
	git("push", "--quiet", "origin", "HEAD:refs/heads/feature")
	git("reset", "--quiet", "--hard", "HEAD^")
	write("a.txt", "ONE: the conflict\ntwo\nthree\nfour\n")
	git("commit", "--quiet", "-am", "conflict")
	git("push", "--quiet", "origin", "HEAD:refs/heads/conflict")
	git("reset", "--quiet", "--hard", "HEAD^")
	write("a.txt", "ONE: main's\ntwo\nthree\nfour\n")
	git("commit", "--quiet", "-am", "main's line")
	git("mv", "a.txt", "b.txt")
	git("commit", "--quiet", "-m", "rename")
	git("push", "--quiet", "origin", "HEAD:refs/heads/main")
	s := newServer(t, Options{GitDir: bare})
	s.SetSettings(Settings{AllowAutoMerge: true, DefaultWorkflowPermissions: "read"})
	return s
}

// TestMergeOfAHeadBehindItsBase: as on GitHub, a protection that is not strict merges a head
// behind its base by a 3-way merge (following the base's rename: the feature's line lands in
// b.txt), and refuses a head that conflicts with it; a strict protection merges neither.
func TestMergeOfAHeadBehindItsBase(t *testing.T) {
	s := behindHost(t)
	pull := func(head string) int {
		_, body := call(t, s, "POST", "/repos/o/r/pulls", `{"title":"`+head+`","head":"`+head+`","base":"main"}`)
		n := int(body["number"].(float64))
		call(t, s, "POST", "/repos/o/r/statuses/"+s.sha(head), `{"state":"success","context":"agent-review"}`)
		return n
	}
	feature, conflict := pull("feature"), pull("conflict")
	s.Protect("main", Protection{Contexts: []string{"agent-review"}, Strict: true})
	if ok, why := s.Mergeable(feature); ok || !strings.Contains(why, "up to date") {
		t.Errorf("strict, a head behind: Mergeable %v %s", ok, why)
	}
	s.Protect("main", Protection{Contexts: []string{"agent-review"}})
	if ok, why := s.Mergeable(conflict); ok || !strings.Contains(why, "conflicts") {
		t.Errorf("a conflicting head: Mergeable %v %s", ok, why)
	}
	if err := s.MergePull(conflict, "maintainer", "squash"); err == nil {
		t.Error("a conflicting head merged")
	}
	if err := s.MergePull(feature, "maintainer", "squash"); err != nil {
		t.Fatal(err)
	}
	b, err := exec.Command("git", "--git-dir", s.opts.GitDir, "show", "main:b.txt").Output()
	if err != nil || string(b) != "ONE: main's\ntwo\nthree\nfour\nfive: the feature\n" {
		t.Errorf("b.txt after the merge: %v %q", err, b)
	}
	if err := exec.Command("git", "--git-dir", s.opts.GitDir, "cat-file", "-e", "main:a.txt").Run(); err == nil {
		t.Error("a.txt is back after the merge")
	}
	if _, pr := call(t, s, "GET", "/repos/o/r/pulls/"+strconv.Itoa(feature), ""); pr["merged"] != true {
		t.Errorf("merged: %v", pr["merged"])
	}
}
