package gitws

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestOutputAlt: git reads an object of another repository's object directory given as the
// alternate, its path holding the list's separator and a quote, and writes nothing there;
// without it, git does not find the object.
func TestOutputAlt(t *testing.T) {
	ctx := context.Background()
	other := filepath.Join(t.TempDir(), `a:b"c`)
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, other, "init", "--quiet", "--bare")
	blob := run(t, other, "hash-object", "-w", "--stdin")
	repo := t.TempDir()
	run(t, repo, "init", "--quiet", "--bare")
	if _, err := Git(ctx, repo, "cat-file", "-e", blob); err == nil {
		t.Fatal("the repository holds the other's blob already")
	}
	if got, err := GitAlt(ctx, repo, filepath.Join(other, "objects"), "cat-file", "-t", blob); err != nil || got != "blob" {
		t.Errorf("with the other's objects as the alternate: %q, %v", got, err)
	}
	if got, err := GitAlt(ctx, repo, "", "cat-file", "-t", blob); err == nil {
		t.Errorf("with no alternate: %q", got)
	}
}
