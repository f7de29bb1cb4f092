//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPlaybookFilesBounded: every file a playbook command reads or writes besides the playbook
// itself (step --data and the runner's command files, --state, --pause-file, weave's --skill,
// --summary and the installation's weaving config) is a regular file: /dev/zero, a FIFO and a
// file over the limit are refused with exit 2 and a message naming the flag and the file, without
// reading on or waiting; a stale FIFO where the data file used to be written first is no
// obstacle. Each call is a process killed at a deadline, so a regression fails instead of
// hanging or eating the memory.
func TestPlaybookFilesBounded(t *testing.T) {
	bin := autonomyBin(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, nil, 0o600); err != nil || os.Truncate(big, 64<<20+1) != nil {
		t.Fatal("cannot make the big file")
	}
	db := filepath.Join(dir, "state.db")
	book := filepath.Join(dir, "book.md")
	os.WriteFile(book, []byte("# Book\n\nOne step.\n\n## STEP 1: One\n\nSay hi.\n"), 0o644)
	skill := filepath.Join(dir, "SKILL.md")
	os.WriteFile(skill, []byte("---\nname: x\ndescription: y\n---\nHi.\n"), 0o644)
	install := filepath.Join(dir, "install")
	os.MkdirAll(filepath.Join(install, ".autonomy"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(install, ".autonomy", "weave.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The data file is not there yet; where it used to be written first is a FIFO.
	fresh := filepath.Join(dir, "fresh.json")
	if err := syscall.Mkfifo(fresh+".tmp", 0o600); err != nil {
		t.Fatal(err)
	}
	step := playbookStepEnv + `={"id":"a","namespace":"cli","argv":["true"],"steps":["a"]}`
	weave := []string{"playbook", "weave", "--actor", "a", "--dir", dir}
	for _, c := range []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"data /dev/zero", []string{step}, []string{"playbook", "step", "--data", "/dev/zero"}, 2, "--data /dev/zero: not a regular file"},
		{"data FIFO", []string{step}, []string{"playbook", "step", "--data", fifo}, 2, "--data " + fifo + ": not a regular file"},
		{"data too large", []string{step}, []string{"playbook", "step", "--data", big}, 2, "--data " + big + ": the file is 67108865 bytes; the limit is 67108864"},
		{"data written past a FIFO", []string{step}, []string{"playbook", "step", "--data", fresh}, 0, `"status":"ok"`},
		{"GITHUB_OUTPUT FIFO", []string{step, "GITHUB_OUTPUT=" + fifo}, []string{"playbook", "step", "--data", filepath.Join(dir, "d1.json")}, 2, fifo + ": not a regular file"},
		{"GITHUB_STEP_SUMMARY FIFO", []string{step, "GITHUB_STEP_SUMMARY=" + fifo}, []string{"playbook", "step", "--data", filepath.Join(dir, "d2.json")}, 2, fifo + ": not a regular file"},
		{"run --state FIFO", nil, []string{"playbook", "run", "--pipeline", "cli true", "--state", fifo}, 2, "--state " + fifo + ": not a regular file"},
		{"run --state /dev/zero", nil, []string{"playbook", "run", "--pipeline", "cli true", "--state", "/dev/zero"}, 2, "--state /dev/zero: not a regular file"},
		{"resume --state FIFO", nil, []string{"playbook", "resume", "--token", "rt_x", "--approve", "--state", fifo}, 2, "--state " + fifo + ": not a regular file"},
		{"run --pause-file FIFO", nil, []string{"playbook", "run", book, "--agent-argv", `["true"]`, "--state", db, "--pause-file", fifo}, 2, "--pause-file " + fifo + ": not a regular file"},
		{"resume --pause-file FIFO", nil, []string{"playbook", "resume", "--token", "rt_x", "--answer", "yes", "--state", db, "--pause-file", fifo}, 2, "--pause-file " + fifo + ": not a regular file"},
		{"weave --skill FIFO", nil, append(weave, "--skill", fifo), 2, "--skill " + fifo + ": not a regular file"},
		{"weave --skill /dev/zero", nil, append(weave, "--skill", "/dev/zero"), 2, "--skill /dev/zero: not a regular file"},
		{"weave --summary FIFO", nil, append(weave, "--skill", skill, "--summary", fifo), 2, "--summary " + fifo + ": not a regular file"},
		{"weave config FIFO", nil, []string{"playbook", "weave", "--actor", "a", "--dir", install, "--skill", skill}, 2, "weave.json: not a regular file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, c.args...)
			cmd.Env = append(os.Environ(), append([]string{"GITHUB_OUTPUT=", "GITHUB_STEP_SUMMARY="}, c.env...)...)
			cmd.Dir = dir
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("autonomy %v: still running at the deadline (killed)", c.args)
			}
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != c.code || !strings.Contains(out.String(), c.want) {
				t.Errorf("autonomy %v: exit %d (want %d), output %q (want %q)", c.args, code, c.code, out.String(), c.want)
			}
		})
	}
}
