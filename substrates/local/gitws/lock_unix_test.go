//go:build unix

package gitws

import (
	"context"
	"strings"
	"testing"
)

// A worktree lock held past the wait (a session can open the git directory and hold it) is not
// waited for until the caller's context ends: the wait ends with an error naming the lock and
// how to find its holder.
func TestLockWorktreesWaitIsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	unlock, err := lockWorktrees(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, err = lockWorktreesWithin(context.Background(), dir, 0)
	if err == nil || !strings.Contains(err.Error(), "has been held by another process") || !strings.Contains(err.Error(), "lsof "+dir) {
		t.Fatalf("a held lock past the wait: %v, want an error naming the lock and how to find its holder", err)
	}
	unlock()
	// Within the wait: a child this process forks meanwhile holds the lock until it execs.
	again, err := lockWorktrees(context.Background(), dir)
	if err != nil {
		t.Fatalf("a free lock: %v", err)
	}
	again()
}
