package gitws

import (
	"context"
	"path/filepath"
)

// CommonDir is the git directory dir's repository commits into (for a linked worktree, the main
// repository's .git), absolute, found by a git run with the hooks and fsmonitor off. "" and an
// error outside a repository.
func CommonDir(ctx context.Context, dir string) (string, error) {
	d, err := gitPath(ctx, dir, "--git-common-dir")
	if err != nil {
		return "", err
	}
	return filepath.Abs(d)
}
