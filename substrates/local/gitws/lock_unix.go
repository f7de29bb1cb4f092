//go:build unix

package gitws

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockName is the file, in a repository's common git directory, whose lock serializes autonomy's
// worktree changes in that repository. git ignores files it does not know there.
const lockName = "autonomy-worktrees.lock"

// lockPoll is how often a waiting process tries the lock again: a worktree change takes tens of
// milliseconds, so a waiter is served soon after the holder is done.
const lockPoll = 5 * time.Millisecond

// worktreeWait bounds how long a worktree change waits for the lock: a change takes tens of
// milliseconds, and the lock file is in the git directory, which a session can open and hold.
const worktreeWait = time.Minute

// lockWorktrees takes the exclusive lock on the worktrees of the repository whose common git
// directory is common, waiting while another process or goroutine holds it, within worktreeWait
// and until ctx ends (lockWorktreesWithin).
func lockWorktrees(ctx context.Context, common string) (func(), error) {
	return lockWorktreesWithin(ctx, common, worktreeWait)
}

// lockWorktreesWithin takes the worktree lock of common, waiting at most wait for it. The
// lock is an flock(2) on a file: the kernel drops it when its holder exits, however it exits, so a
// crash never leaves the repository locked. The returned function releases it.
//
// git changes .git/worktrees without a lock of its own: two "git worktree add" at once can each
// find the other's half-written entry ("failed to read .git/worktrees/…/commondir"), and a "git
// worktree prune" can delete an entry that another add has not finished writing.
func lockWorktreesWithin(ctx context.Context, common string, wait time.Duration) (func(), error) {
	path := filepath.Join(common, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open the worktree lock %s: %w", path, err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil // closing the file drops the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("cannot lock %s: %w", path, err)
		}
		if !time.Now().Before(deadline) {
			f.Close()
			return nil, fmt.Errorf("the worktree lock %s has been held by another process for %s (a worktree change takes a moment): find the holder with lsof %s, end it, and retry", path, wait, path)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the worktree lock %s, held by another autonomy process: %w", path, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}
