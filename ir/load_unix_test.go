//go:build unix

package ir

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSpecialFilesNeverBlock: a FIFO as the profile, or as a skill file or resource, is refused
// without reading it (reading would block forever).
func TestSpecialFilesNeverBlock(t *testing.T) {
	dir := writeProfile(t, map[string]string{
		"ir.yml": minimal + "resources: [fifo]\n",
	})
	if err := os.MkdirAll(filepath.Join(dir, "skills", "hello"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, fifo := range []string{"skills/hello/SKILL.md", "fifo"} {
		if err := syscall.Mkfifo(filepath.Join(dir, fifo), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	_, diags, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := diags.String()
	if !strings.Contains(got, `SKILL.md is not a regular file`) || !strings.Contains(got, `resource "fifo" is not a regular file`) {
		t.Errorf("diagnostics:\n%s", got)
	}

	fifoDir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifoDir, ProfileFile), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifoDir, filepath.Join(fifoDir, ProfileFile), "/dev/zero"} {
		if _, _, err := Load(path); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Load(%s) = %v; want a not-a-regular-file error", path, err)
		}
	}
}
