package ir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNoProfileNamesTheOneNearby: a directory without ir.yml that holds ir.yaml, or init's
// autonomy/ folder, is refused naming what to give instead.
func TestNoProfileNamesTheOneNearby(t *testing.T) {
	yaml, repo, empty := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(yaml, "ir.yaml"), []byte("schema: autonomy.ir.v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, "autonomy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "autonomy", "ir.yml"), []byte("schema: autonomy.ir.v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		yaml:  yaml + ": not a profile directory: it has no ir.yml (it has ir.yaml: rename it ir.yml)",
		repo:  repo + ": not a profile directory: it has no ir.yml (autonomy init writes the profile into autonomy/: give " + filepath.Join(repo, "autonomy") + ")",
		empty: empty + ": not a profile directory: it has no ir.yml",
	} {
		_, _, err := Check(dir)
		if err == nil || err.Error() != want {
			t.Errorf("Check(%s) = %v, want %q", dir, err, want)
		}
	}
}
