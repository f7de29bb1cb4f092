//go:build linux

package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGroupsWithEnv: the groups of the processes started with a variable are found, each once,
// whatever group they run in; a process without it is not, and neither is one that exited.
func TestGroupsWithEnv(t *testing.T) {
	kv := fmt.Sprintf("AUTONOMY_TEST_MARK=%d-%d", os.Getpid(), time.Now().UnixNano())
	spawn := func(env []string) int {
		cmd := exec.Command("sh", "-c", "sleep 30 & echo ready; wait")
		cmd.Env, cmd.SysProcAttr = env, SysProcAttr()
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pgid := cmd.Process.Pid
		t.Cleanup(func() {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
		if line, _ := bufio.NewReader(out).ReadString('\n'); strings.TrimSpace(line) != "ready" {
			t.Fatalf("printed %q", line)
		}
		return pgid
	}
	a, b := spawn(append(os.Environ(), kv)), spawn(append(os.Environ(), kv))
	spawn(os.Environ())
	want := []int{a, b}
	slices.Sort(want)
	if got := GroupsWithEnv(kv); !slices.Equal(got, want) {
		t.Fatalf("GroupsWithEnv = %v, want %v", got, want)
	}
	if err := Terminate(a, time.Second); err != nil {
		t.Fatal(err)
	}
	if got := GroupsWithEnv(kv); !slices.Equal(got, []int{b}) {
		t.Fatalf("after the first group ended: %v, want [%d]", got, b)
	}
	if got := GroupsWithEnv(kv + "x"); len(got) != 0 {
		t.Fatalf("a value no process has: %v", got)
	}
}
