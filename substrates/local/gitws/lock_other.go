//go:build !unix

package gitws

import (
	"context"
	"errors"
)

// lockWorktrees has no implementation off Unix, where the local runner does not run: isolated
// workspaces are refused rather than changed without the lock.
func lockWorktrees(ctx context.Context, common string) (func(), error) {
	return nil, errors.New("git worktrees for isolated workspaces need a Unix-like OS (Linux or macOS)")
}
