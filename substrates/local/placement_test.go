package local

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// A local installation inside the profile's own folder (compile .. --dir . run from its skills
// folder) is warned of, with the folder above the profile as the fix; the profile's folder itself,
// and any folder outside it, are not.
func TestAnInstallationInsideTheProfileIsWarnedOf(t *testing.T) {
	repo := t.TempDir()
	p := &ir.Profile{Dir: filepath.Join(repo, "autonomy")}
	inside := filepath.Join(repo, "autonomy", "skills")
	if got := (Substrate{}).Misplaced(p, inside); !strings.Contains(got, "inside the profile's own "+p.Dir) || !strings.Contains(got, "--dir "+repo) {
		t.Errorf("inside: %q", got)
	}
	for _, dir := range []string{repo, p.Dir, filepath.Join(repo, "other"), filepath.Join(repo, "autonomy-other")} {
		if got := (Substrate{}).Misplaced(p, dir); got != "" {
			t.Errorf("%s: %q", dir, got)
		}
	}
}

// A local installation inside another one (compile run from a subfolder of it, --dir .) is
// warned of, naming the installation to update (newc9 made a second one in silence); the
// installation itself, and a folder beside it, are not.
func TestAnInstallationInsideAnotherIsWarnedOf(t *testing.T) {
	t.Parallel()
	root := installFleet(t, editedFleet, false)
	p := &ir.Profile{Dir: filepath.Join(t.TempDir(), "profile")}
	sub := filepath.Join(root, "src", "deep")
	if got := (Substrate{}).Misplaced(p, sub); !strings.Contains(got, "inside the local installation "+root) || !strings.Contains(got, "--dir "+root) {
		t.Errorf("inside: %q", got)
	}
	// A session's worktree is that installation's own checkout (attack28: told to compile into
	// the operator's live installation).
	worktree := filepath.Join(root, ".autonomy", "worktrees", "1-abcd")
	for _, dir := range []string{root, filepath.Dir(root), filepath.Join(filepath.Dir(root), "beside"), worktree} {
		if got := (Substrate{}).Misplaced(p, dir); got != "" {
			t.Errorf("%s: %q", dir, got)
		}
	}
}
