//go:build unix

package store

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenRefusesASpecialFile: a database path naming a device, a FIFO, a directory, or a
// symbolic link to one of them is refused up front, saying what it is and what to give instead
// (SQLite said "disk I/O error"), and Open neither hangs nor writes to it.
func TestOpenRefusesASpecialFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.db")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{"/dev/zero": "a device", fifo: "a FIFO", link: "a device", sub: "a directory"} {
		st, err := Open(path)
		if err == nil {
			st.Close()
			t.Errorf("Open(%s) opened it", path)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "is "+kind+", not a regular file") || !strings.Contains(msg, "give the path of a database file") {
			t.Errorf("Open(%s): %v", path, err)
		}
	}
}
