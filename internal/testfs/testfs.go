// Package testfs holds file-tree helpers shared by the tests of several packages, and the
// command runner (git, mostly) that makes and reads those trees.
package testfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// WriteFile writes content to dir/name (a slash-separated name), making its folders. A failure
// fails the test.
func WriteFile(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Run runs argv in dir ("" for the current folder) and returns its output (stdout and stderr),
// trimmed. A failure fails the test, with the output.
func Run(t testing.TB, dir string, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
	return strings.TrimSpace(string(out))
}

// ProfileWith copies the profile folder from into a new temporary folder of the same name, with
// extra appended to its ir.yml (a policy.box key, say), and returns the copy.
func ProfileWith(t testing.TB, from, extra string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), filepath.Base(from))
	CopyTree(t, from, dir)
	f, err := os.OpenFile(filepath.Join(dir, "ir.yml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(extra); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ReadString returns the content of the fixture file path. A failure fails the test.
func ReadString(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
