package ghactions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An installation into a folder of a git repository other than its root is misplaced: GitHub
// never runs its workflows. The root itself, and a folder outside any repository, are not.
func TestMisplacedOutsideTheRepositoryRoot(t *testing.T) {
	repo := t.TempDir()
	profile := filepath.Join(repo, "autonomy")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(profile, 0o755); err != nil {
		t.Fatal(err)
	}
	want := "inside the git repository " + repo + ": GitHub runs only the workflows of " + filepath.Join(repo, ".github", "workflows") + ", never those of " + filepath.Join(profile, ".github", "workflows") + " (compile with --dir " + repo + ", the repository's root)"
	if got := (Substrate{}).Misplaced(nil, profile); !strings.Contains(got, want) {
		t.Errorf("Misplaced(%s) = %q, want %q", profile, got, want)
	}
	for _, dir := range []string{repo, t.TempDir()} {
		if got := (Substrate{}).Misplaced(nil, dir); got != "" {
			t.Errorf("Misplaced(%s) = %q, want nothing", dir, got)
		}
	}
}
