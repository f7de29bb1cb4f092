//go:build unix

package local

import (
	"path/filepath"
	"slices"
	"testing"
)

// What the jail hides of a home that is the session's workspace: every login in it still (the
// workspace is bound back into no hidden folder; a login inside it is hidden, as ever), a
// CODEX_HOME that is the workspace itself not (hiding it would hide the work); the program's
// folder is kept, not what it holds hidden with it (attack27: a kept folder unhid every login in it).
func TestLoginPathsOfAHomeThatIsTheWorkspace(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, editedFleet, false)
	home := t.TempDir()
	r := newRunner(t, dir, Options{Env: []string{"PATH=/usr/bin:/bin", "HOME=" + home, "CODEX_HOME=" + home}})
	sv := &supervision{r: r, workdir: home, env: r.opts.Env}
	hide, keep := sv.loginPaths(filepath.Join(home, "claude"))
	for _, want := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".claude"), filepath.Join(home, ".git-credentials")} {
		if !slices.Contains(hide, want) {
			t.Errorf("%s is not hidden: %v", want, hide)
		}
	}
	if slices.Contains(hide, home) {
		t.Errorf("the workspace itself is hidden: %v", hide)
	}
	if !slices.Contains(keep, home) || !slices.Contains(keep, dir) {
		t.Errorf("kept %v, want the workspace and the installation", keep)
	}
}
