// Package testbin builds the autonomy binary once for the tests of every package that runs it as
// a separate process. The test processes of one `go test ./...` share one build: the binary is
// kept in a directory under os.TempDir() under a name keyed by a hash of the module's source (every
// file but tests and build outputs) and of the Go toolchain and build environment, so a process
// whose source was built before finds it without running the go command, a binary another process
// is running is never rewritten, and two worktrees with different sources never share one. A
// process that finds no binary for its source builds it under the directory's lock, so processes
// starting together wait for one build instead of each building.
package testbin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/autonomyhq/autonomy/internal/buildinfo"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Package is the import path of the command the tests run.
const Package = "github.com/autonomyhq/autonomy/cmd/autonomy"

// keep is how long a binary no test process asked for is kept before a later build removes it.
const keep = 24 * time.Hour

// held is called with true once Build holds the directory's lock and with false just before it
// lets go (a test records when each process held it).
var held = func(bool) {}

var (
	once  sync.Once
	built string
	err   error
)

// Path is the autonomy binary of this module's current source, found or built at most once per
// test process and shared with the other test processes of the run. A failed build fails t.
func Path(t testing.TB) string {
	t.Helper()
	once.Do(func() { built, _, err = Build(Dir()) })
	if err != nil {
		t.Fatal(err)
	}
	return built
}

// Dir is the directory the shared binaries are kept in: autonomy-testbin under os.TempDir().
func Dir() string { return filepath.Join(os.TempDir(), "autonomy-testbin") }

// Build returns the path of the binary of the module's current source in dir, building it there
// under dir's lock if no process did before; fresh says whether this call built it.
func Build(dir string) (path string, fresh bool, err error) {
	root, err := moduleRoot()
	if err != nil {
		return "", false, err
	}
	key, err := SourceKey(root)
	if err != nil {
		return "", false, fmt.Errorf("testbin: hashing the source in %s: %w", root, err)
	}
	path = filepath.Join(dir, "autonomy-"+key+exe())
	if touch(path) == nil {
		return path, false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, err
	}
	unlock, err := lock(dir)
	if err != nil {
		return "", false, fmt.Errorf("testbin: locking %s: %w", dir, err)
	}
	held(true)
	defer func() { held(false); unlock() }()
	if touch(path) == nil {
		return path, false, nil // built by the process that held the lock before this one
	}
	tmp := filepath.Join(dir, fmt.Sprintf("build-%d%s", os.Getpid(), exe()))
	defer os.Remove(tmp)
	// No VCS stamp (a test binary is the same at every commit), but a stamped test commit, so
	// that it may compile gh-actions workflows (which pin the commit that compiled them).
	cmd := exec.Command("go", "build", "-buildvcs=false", "-ldflags="+buildinfo.StampCommit(buildinfo.TestCommit), "-o", tmp, Package)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", false, fmt.Errorf("testbin: go build %s: %v\n%s", Package, err, out)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", false, err
	}
	prune(dir, path)
	return path, true, nil
}

// touch marks the binary at path as used now (so that no build prunes it); it fails when there is
// none.
func touch(path string) error {
	now := time.Now()
	return os.Chtimes(path, now, now)
}

// moduleRoot is the directory of the go.mod above the working directory (a test's package).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testbin: no go.mod above the working directory")
		}
		dir = parent
	}
}

// SourceKey is the first 16 hex digits of a hash of what the binary is built from: every file
// under root (its path and content) but the tests, .git and build outputs, with the Go version
// and the environment that changes a build.
func SourceKey(root string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, v := range []string{"GOOS", "GOARCH", "GOFLAGS", "CGO_ENABLED", "GOEXPERIMENT", "GOAMD64", "GOARM64", "GOTOOLCHAIN"} {
		fmt.Fprintf(h, "%s=%s\n", v, os.Getenv(v))
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if d.Name() == ".git" || rel == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || skipped(rel) {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		_, err = io.Copy(h, f)
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// skipped reports whether the file at rel (relative to the module root) is no part of the binary:
// a test, or a build or test output the repository ignores.
func skipped(rel string) bool {
	name := filepath.Base(rel)
	for _, suffix := range []string{"_test.go", ".test", ".prof"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return rel == "autonomy" || rel == "autonomy.exe" || (rel == name && strings.HasSuffix(name, ".out"))
}

// prune removes the binaries in dir, other than except, that no test process asked for in keep.
func prune(dir, except string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if p == except || !strings.HasPrefix(e.Name(), "autonomy-") {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > keep {
			_ = os.Remove(p) // one in use where that forbids removing it is left to a later build
		}
	}
}

// exe is the executable suffix of this system.
func exe() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}
