package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// AUTONOMY_STATE_DIR is honored only when it names this installation's own state folder (the
// very database, reached at another path); a copy, another folder or a relative path is refused
// with the fix.
func TestStateAliasMustBeTheInstallationsOwn(t *testing.T) {
	dir := installFleet(t, envFleet, false)
	newRunner(t, dir, Options{}).Close() // makes the store
	link := filepath.Join(t.TempDir(), "state")
	if err := os.Symlink(filepath.Join(dir, filepath.FromSlash(StateDir)), link); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, dir, Options{State: link})
	if got := r.In.Path(StateDir + "/logs"); got != filepath.Join(link, "logs") {
		t.Errorf("the logs are at %s, want under %s", got, link)
	}
	if got := r.In.Path(StateDir + "x/y"); got != filepath.Join(dir, filepath.FromSlash(StateDir+"x/y")) {
		t.Errorf("a sibling of the state folder is at %s", got)
	}
	copied := t.TempDir()
	data, err := os.ReadFile(DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(copied, "state.db"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{copied, t.TempDir(), "state"} {
		if _, err := New(dir, Options{State: bad}); err == nil || !strings.Contains(err.Error(), StateEnv+"="+bad+" is not where this process reaches the state folder") || !strings.Contains(err.Error(), "unset it") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
