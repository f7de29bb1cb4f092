//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestParallelCompilesIntoNewDir starts compiles of one profile into one directory that does not
// exist yet, as separate processes at once. Each waits for the directory's lock in turn: all
// exit 0, exactly one creates the files, the others find them unchanged, and none fails with
// "mkdir …: file exists".
func TestParallelCompilesIntoNewDir(t *testing.T) {
	const procs = 4
	bin := autonomyBin(t)
	dir := filepath.Join(t.TempDir(), "new", "repo")
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*bytes.Buffer, procs)
	for i := range cmds {
		cmds[i] = exec.Command(bin, "compile", "../../profiles/sdlc", "--target", "local", "--out", dir)
		outs[i] = &bytes.Buffer{}
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	summary := regexp.MustCompile(`local: (\d+) created, 0 updated, 0 deleted, (\d+) unchanged`)
	created := 0
	for i, c := range cmds {
		err := c.Wait()
		out := outs[i].String()
		if err != nil || strings.Contains(out, "file exists") {
			t.Errorf("compile %d: %v\n%s", i, err, out)
			continue
		}
		m := summary.FindStringSubmatch(out)
		if m == nil {
			t.Errorf("compile %d: no summary\n%s", i, out)
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n > 0 {
			created++
		}
	}
	if created != 1 {
		t.Errorf("%d compiles created files, want exactly 1", created)
	}
	if code, out, errOut := run(t, "check", "../../profiles/sdlc", "--target", "local", "--dir", dir); code != 0 {
		t.Errorf("check after the parallel compiles: exit %d\n%s%s", code, out, errOut)
	}
}

// TestCompileWaitsForTheLock: while another process holds the directory's lock, compile says
// that it waits, and installs once the lock is released.
func TestCompileWaitsForTheLock(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		f.Close() // releases the lock
	}()
	code, _, errOut := run(t, "compile", "../../profiles/hello", "--target", "gh-actions", "--out", dir)
	if code != 0 || !strings.Contains(errOut, dir+" is held by another compile installing into it, or by an agent session working in the installation root; waiting for it") || !strings.Contains(errOut, "created") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
}
