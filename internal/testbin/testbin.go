// Package testbin builds the autonomy binary once for the tests of every package that runs it as
// a separate process. The test processes of one `go test ./...` share one build: each takes a
// lock in a directory under os.TempDir(), runs `go build` (which Go's build cache makes a
// no-op when another process just built the same source) and keeps the result under a name
// keyed by its content, so a binary another process is running is never rewritten, and two
// worktrees with different sources never share one.
package testbin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
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

// Path is the autonomy binary of this module's current source, built at most once per test
// process and shared with the other test processes of the run. A failed build fails t.
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

// Build builds the command into dir under dir's lock and returns the binary's path, and whether
// this call put it there (false: a process before it had built the same binary).
func Build(dir string) (path string, fresh bool, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, err
	}
	unlock, err := lock(dir)
	if err != nil {
		return "", false, fmt.Errorf("testbin: locking %s: %w", dir, err)
	}
	held(true)
	defer func() { held(false); unlock() }()
	tmp := filepath.Join(dir, fmt.Sprintf("build-%d%s", os.Getpid(), exe()))
	defer os.Remove(tmp)
	if out, err := exec.Command("go", "build", "-o", tmp, Package).CombinedOutput(); err != nil {
		return "", false, fmt.Errorf("testbin: go build %s: %v\n%s", Package, err, out)
	}
	sum, err := hashFile(tmp)
	if err != nil {
		return "", false, err
	}
	path = filepath.Join(dir, "autonomy-"+sum+exe())
	prune(dir, path)
	if _, err := os.Stat(path); err == nil {
		now := time.Now()
		return path, false, os.Chtimes(path, now, now) // in use: not pruned
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", false, err
	}
	return path, true, nil
}

// hashFile is the first 16 hex digits of the SHA-256 of the file at path.
func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
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
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				continue // in use on a system that forbids removing it: a later build retries
			}
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
