package store

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDatabaseIsPrivate: the database and its WAL files are created 0600, as docs/local.md says.
func TestDatabaseIsPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "state.db")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.db.Exec("PRAGMA user_version"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if os.IsNotExist(err) && p != path {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Errorf("the state folder is %v, want 0700", fi.Mode().Perm())
	}
}
