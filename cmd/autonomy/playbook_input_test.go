//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPlaybookRunRefusesUnboundedInput: run and resume read a playbook file as validate does:
// /dev/zero, a symbolic link to it, a FIFO and a file over its format's limit are refused with
// exit 2 and a message naming the file, without reading on or waiting. Each call is a process
// killed at a deadline, so a regression fails instead of hanging or eating the memory.
func TestPlaybookRunRefusesUnboundedInput(t *testing.T) {
	bin := autonomyBin(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	link := filepath.Join(dir, "zero.md")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "flow.yml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big, bigBook := filepath.Join(dir, "big.md"), "## STEP 1: x\n\n"+strings.Repeat("a", 200_001)+"\n"
	os.WriteFile(big, []byte(bigBook), 0o644)
	bigFlow, bigYAML := filepath.Join(dir, "big.yml"), "name: big\nsteps:\n  - id: a\n    command: cli true\n#"+strings.Repeat("a", 1<<20)+"\n"
	os.WriteFile(bigFlow, []byte(bigYAML), 0o644)
	for _, c := range []struct{ file, want string }{
		{"/dev/zero", "not a regular file"},
		{link, "not a regular file"},
		{fifo, "not a regular file"},
		{big, fmt.Sprintf("the step playbook is %d bytes; the limit is 200000", len(bigBook))},
		{bigFlow, fmt.Sprintf("the workflow is %d bytes; the limit is 1048576", len(bigYAML))},
	} {
		for _, args := range [][]string{
			{"playbook", "run", c.file},
			{"playbook", "resume", "--token", "rt_x", "--answer", "yes", "--playbook", c.file},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			cmd := exec.CommandContext(ctx, bin, append(args, "--state", db)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			late := ctx.Err() != nil
			cancel()
			code := -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if late {
				t.Errorf("autonomy %v: still running at the deadline (killed)", args)
				continue
			}
			if msg := stderr.String(); code != 2 || !strings.Contains(msg, c.file+": "+c.want) {
				t.Errorf("autonomy %v: exit %d (want 2), stderr %q (want %q)", args, code, msg, c.file+": "+c.want)
			}
		}
	}
}
