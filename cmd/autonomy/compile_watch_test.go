//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCompileWatch runs compile --watch as its own process: it installs, installs again when a
// file of the profile changes (and says so), prints a broken profile's errors and keeps
// watching, and exits 0 on Ctrl-C.
func TestCompileWatch(t *testing.T) {
	prof := copyProfile(t, "hello")
	dir := t.TempDir()
	cmd := exec.Command(autonomyBin(t), "compile", prof, "--target", "local", "--dir", dir, "--watch")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	// A watch that stops reporting is killed, so the test fails instead of hanging.
	watchdog := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
	defer watchdog.Stop()
	sc := bufio.NewScanner(stderr)
	// until reads stderr up to the next "watching" line and returns what came before it.
	until := func() string {
		t.Helper()
		var b strings.Builder
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "autonomy: watching ") {
				return b.String()
			}
			b.WriteString(sc.Text() + "\n")
		}
		t.Fatalf("compile --watch ended early:\n%s", b.String())
		return ""
	}
	// change is until for the compile an edit caused: a poll that read the directory while the
	// edit happened sees it once more, and compiles again to no change; those are skipped.
	change := func() string {
		t.Helper()
		for i := 0; i < 5; i++ {
			if got := until(); !strings.Contains(got, ": 0 created, 0 updated, 0 deleted, 9 unchanged") {
				return got
			}
		}
		t.Fatal("five compiles changed nothing")
		return ""
	}
	if got := until(); !strings.Contains(got, "local: 9 created, 0 updated") {
		t.Fatalf("first compile:\n%s", got)
	}
	// Each edit replaces the file at once, as editors save, so the watch sees one change.
	replace := func(path, content string) {
		t.Helper()
		tmp := filepath.Join(t.TempDir(), "new")
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	replace(filepath.Join(prof, "skills", "greeter", "SKILL.md"), "# greeter\nSay hello.\n")
	// The skill, the manifest and the launcher config that records the skill's sha256.
	if got := change(); !strings.Contains(got, "local: 0 created, 3 updated, 0 deleted") {
		t.Fatalf("after the edit:\n%s", got)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, ".autonomy", "skills", "greeter", "SKILL.md")); string(data) != "# greeter\nSay hello.\n" {
		t.Errorf("the installed skill is %q", data)
	}
	yml := filepath.Join(prof, "ir.yml")
	good, err := os.ReadFile(yml)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(good), "capabilities: [tasks:converse]", "capabilities: [tasks:conver]", 1)
	if broken == string(good) {
		t.Fatal("the hello profile changed: no capabilities line to break")
	}
	replace(yml, broken)
	if got := change(); !strings.Contains(got, `unknown capability "tasks:conver"`) || !strings.Contains(got, "nothing was compiled") {
		t.Fatalf("a broken profile:\n%s", got)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var rest strings.Builder
	for sc.Scan() {
		rest.WriteString(sc.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(rest.String(), "autonomy: stopped watching") {
		t.Errorf("after Ctrl-C: %v\n%s", err, rest.String())
	}
}
