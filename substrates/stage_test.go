package substrates

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// onCPUs sets GOMAXPROCS to n until the test ends.
func onCPUs(t *testing.T, n int) {
	t.Helper()
	old := runtime.GOMAXPROCS(n)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// hookCreate replaces createFile with f until the test ends.
func hookCreate(t *testing.T, f func(p string, data []byte, mode fs.FileMode) error) {
	t.Helper()
	createFile = f
	t.Cleanup(func() { createFile = createStaged })
}

// manyFiles sets GOMAXPROCS to 4 until the test ends and returns a new directory and the paths
// of 256 files in one directory; with update, version 1 of them is installed there already.
func manyFiles(t *testing.T, update bool) (dir string, names []string) {
	t.Helper()
	onCPUs(t, 4)
	dir = t.TempDir()
	for i := range 256 {
		names = append(names, fmt.Sprintf("w/f-%03d.yml", i))
	}
	if update {
		mustWrite(t, dir, version(1, names...), WriteOptions{})
	}
	return dir, names
}

// guard is how long a test waits for something the code under test must do before it gives up
// and fails: never reached when the code is right.
const guard = 10 * time.Second

// TestWriteStagesFilesAtOnce: an install of many files creates its staged files on several CPUs
// at once, in a new directory's tree and one by one alike, and installs exactly its output.
func TestWriteStagesFilesAtOnce(t *testing.T) {
	for _, name := range []string{"fresh", "update"} {
		t.Run(name, func(t *testing.T) {
			dir, names := manyFiles(t, name == "update")
			var inFlight atomic.Int32
			var gaveUp atomic.Bool
			together := make(chan struct{})
			var once sync.Once
			hookCreate(t, func(p string, data []byte, mode fs.FileMode) error {
				defer inFlight.Add(-1)
				if inFlight.Add(1) >= 2 {
					once.Do(func() { close(together) })
				}
				if !gaveUp.Load() {
					select {
					case <-together:
					case <-time.After(guard):
						gaveUp.Store(true)
					}
				}
				return createStaged(p, data, mode)
			})
			mustWrite(t, dir, version(2, names...), WriteOptions{})
			if gaveUp.Load() {
				t.Error("the staged files were created one at a time")
			}
			if drifts, err := Check(dir, version(2, names...)); err != nil || len(drifts) != 0 {
				t.Errorf("drift %+v, %v", drifts, err)
			}
		})
	}
}

// TestWriteStagingFailureIsTheFirstFile: when staging fails for several files, the install
// reports the first of them in the Output's order, even when a later one failed first, and
// leaves the directory as it was, with no stage.
func TestWriteStagingFailureIsTheFirstFile(t *testing.T) {
	for _, name := range []string{"fresh", "update"} {
		t.Run(name, func(t *testing.T) {
			dir, names := manyFiles(t, name == "update")
			before := snapshot(t, dir)
			later := make(chan struct{})
			hookCreate(t, func(p string, data []byte, mode fs.FileMode) error {
				switch {
				case strings.Contains(string(data), "f-200.yml"):
					close(later)
					return errors.New("injected failure of f-200")
				case strings.Contains(string(data), "f-040.yml"):
					select {
					case <-later:
					case <-time.After(guard):
					}
					return errors.New("injected failure of f-040")
				}
				return createStaged(p, data, mode)
			})
			_, err := Write(dir, version(2, names...), WriteOptions{})
			if err == nil || !strings.Contains(err.Error(), "injected failure of f-040") {
				t.Fatalf("got %v, want the failure of f-040", err)
			}
			sameTree(t, before, snapshot(t, dir))
			if stages, _ := filepath.Glob(filepath.Join(dir, ".autonomy", "stage*")); len(stages) > 0 {
				t.Errorf("stage left behind: %v", stages)
			}
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(journalPath("t")))); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("journal: %v", err)
			}
		})
	}
}
