//go:build linux

package substrates

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFlushStagedReportsItsFailure: syncfs of a stage that cannot be opened, and the sync of a
// few files one of which is gone, fail with an error that names the path.
func TestFlushStagedReportsItsFailure(t *testing.T) {
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone")
	many := []string{gone, gone, gone, gone, gone}
	if err := flushStaged(gone, many); err == nil || !strings.Contains(err.Error(), gone) {
		t.Errorf("syncfs of a missing stage: got %v, want an error naming %s", err, gone)
	}
	writeFile(t, dir, "here", "x", 0o400) // read-only: fsync needs no write access
	if err := flushStaged(dir, []string{filepath.Join(dir, "here"), gone}); err == nil || !strings.Contains(err.Error(), gone) {
		t.Errorf("fsync of a missing file: got %v, want an error naming %s", err, gone)
	}
	if err := flushStaged(dir, []string{filepath.Join(dir, "here")}); err != nil {
		t.Errorf("fsync of a read-only file: %v", err)
	}
	if err := flushStaged(dir, append(many[:0:0], filepath.Join(dir, "here"), gone, gone, gone, gone)); err != nil {
		t.Errorf("syncfs of the stage: %v (it syncs the file system, not the files one by one)", err)
	}
}
