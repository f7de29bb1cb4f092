//go:build unix

package stepsrun

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
)

// TestCommandTimeout: an invocation that outlives its timeout is killed with its whole process
// group (a grandchild included), and the step fails saying so.
func TestCommandTimeout(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	c := &Command{Argv: []string{"/bin/sh", "-c", "sleep 30 & echo $! > " + pidFile + "; wait"}, Dir: dir, Timeout: 300 * time.Millisecond}
	start := time.Now()
	_, err := c.Invoke(context.Background(), "1", "prompt")
	if err == nil || !strings.Contains(err.Error(), "timed out after 300ms; its process group was killed") || time.Since(start) > 10*time.Second {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
	raw, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	deadline := time.Now().Add(5 * time.Second)
	for pid > 0 && syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the grandchild %d outlived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pid == 0 {
		t.Fatal("the grandchild never started")
	}
}

// TestCommandBackgroundChild: an invocation ends when the agent exits, though a child it left in
// the background holds its stdout: the final message is what it printed, and the child is
// killed with its process group (it used to hold the invocation until the timeout).
func TestCommandBackgroundChild(t *testing.T) {
	c := &Command{Argv: []string{"/bin/sh", "-c", "sleep 301 & echo $!"}, Dir: t.TempDir(), Timeout: 20 * time.Second, Drain: 50 * time.Millisecond}
	msg, err := c.Invoke(context.Background(), "1", "prompt")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(msg))
	if err != nil {
		t.Fatalf("the message %q", msg)
	}
	start, err := proc.StartTime(pid)
	deadline := time.Now().Add(10 * time.Second)
	for err == nil && proc.Alive(pid, start) { // a zombie is not alive: init reaps it
		if time.Now().After(deadline) {
			t.Fatalf("the background child %d outlived the invocation", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCommandPresetTmp: a preset that asks for it (codex) runs with a TMPDIR of its own, new,
// under the TMPDIR it was given (which holds its CODEX_HOME), and removed once it ended.
func TestCommandPresetTmp(t *testing.T) {
	parent := t.TempDir()
	script := `[ -d "$TMPDIR" ] && [ -z "$(ls -A "$TMPDIR")" ] && printf '%s' "$TMPDIR" > "$1"`
	c := &Command{Preset: "codex", Argv: []string{"/bin/sh", "-c", script, "sh", "{result}"}, Dir: t.TempDir(),
		Env: []string{"PATH=/usr/bin:/bin", "TMPDIR=" + parent, "CODEX_HOME=" + filepath.Join(parent, "home")}}
	got, err := c.Invoke(context.Background(), "1", "prompt")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(got) != parent {
		t.Fatalf("TMPDIR was %q, want a new directory in %s", got, parent)
	}
	if _, err := os.Stat(got); !os.IsNotExist(err) {
		t.Errorf("%s is left after the invocation: %v", got, err)
	}
}
