package ghactions

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/autonomyhq/autonomy/ir"
)

// Misplaced says why dir is not where GitHub reads workflows: a folder inside a git repository
// other than its root (the profile's own folder, compile . run from it), whose
// .github/workflows GitHub never runs. Outside any repository (a scratch folder) it says nothing.
func (Substrate) Misplaced(_ *ir.Profile, dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	root := repoRoot(abs)
	if root == "" || root == abs {
		return ""
	}
	return fmt.Sprintf("installing into %s, inside the git repository %s: GitHub runs only the workflows of %s, never those of %s (compile with --dir %s, the repository's root)",
		dir, root, filepath.Join(root, ".github", "workflows"), filepath.Join(dir, ".github", "workflows"), root)
}

// repoRoot is the nearest of dir and its parents holding .git (a directory, or a worktree's
// file), or "".
func repoRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}
