//go:build unix

package agentclitest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RunTimeout bounds one Run.
const RunTimeout = 90 * time.Second

// Run runs an agent CLI for a test: argv in a temporary directory, with exactly env plus the
// test's PATH, the prompt on stdin, in its own process group, killed as a group when it ends or
// at RunTimeout (which fails the test). It returns stdout and stderr together.
func Run(t testing.TB, env []string, stdin string, argv ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it left in its group
	}
	if ctx.Err() != nil {
		t.Fatalf("%s timed out after %s:\n%s", argv[0], RunTimeout, out.String())
	}
	return out.String(), err
}
