// Package testfs holds file-tree helpers shared by the tests of several packages.
package testfs

import (
	"os"
	"path/filepath"
	"testing"
)

// CopyTree copies the folder from into to (created if missing): its folders and regular files,
// each file with its mode. A failure fails the test.
func CopyTree(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copying %s to %s: %v", from, to, err)
	}
}
