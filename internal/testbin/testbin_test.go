package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// childEnv makes the test binary a test process that builds into the directory it names.
const childEnv = "TESTBIN_CHILD_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		var span [2]int64
		held = func(on bool) {
			if on {
				span[0] = time.Now().UnixNano()
			} else {
				span[1] = time.Now().UnixNano()
			}
		}
		path, fresh, err := Build(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(path, fresh, span[0], span[1])
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestPathRunsAndIsBuiltOnce: Path is a working autonomy binary, the same one on every call.
func TestPathRunsAndIsBuiltOnce(t *testing.T) {
	bin := Path(t)
	if out, err := exec.Command(bin, "version").CombinedOutput(); err != nil {
		t.Fatalf("%s version: %v\n%s", bin, err, out)
	}
	if again := Path(t); again != bin {
		t.Errorf("a second Path is %s; want the first, %s", again, bin)
	}
	if filepath.Dir(bin) != Dir() {
		t.Errorf("the binary is in %s; want the shared %s", filepath.Dir(bin), Dir())
	}
}

// TestBuildSharedAcrossProcesses: test processes building at once into one directory build one
// at a time (the others wait, then find Go's cache warm) and all get the one binary, which
// exactly one of them put there.
func TestBuildSharedAcrossProcesses(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const n = 4
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), childEnv+"="+dir)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("child %d: %v\n%s", i, err, out)
			}
			outs[i] = strings.TrimSpace(string(out))
		})
	}
	wg.Wait()
	fresh := 0
	var path string
	spans := make([][2]int64, n)
	for i, o := range outs {
		var p, f string
		if _, err := fmt.Sscan(o, &p, &f, &spans[i][0], &spans[i][1]); err != nil {
			t.Fatalf("child %d printed %q: %v", i, o, err)
		}
		if i == 0 {
			path = p
		}
		if p != path {
			t.Errorf("child %d got %s; child 0 got %s", i, p, path)
		}
		if f == "true" {
			fresh++
		}
	}
	for i := range spans {
		for j := range i {
			if spans[i][0] < spans[j][1] && spans[j][0] < spans[i][1] {
				t.Errorf("children %d and %d built at the same time: %v and %v", j, i, spans[j], spans[i])
			}
		}
	}
	if fresh != 1 {
		t.Errorf("%d processes put the binary in place; want 1 (the others reuse it): %q", fresh, outs)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the directory holds %d entries; want the one binary (no build left behind)", len(entries))
	}
}

// TestBuildPrunesUnusedBinaries: a build removes the binaries no test asked for in a day, and
// keeps the others.
func TestBuildPrunesUnusedBinaries(t *testing.T) {
	dir := t.TempDir()
	old, recent := filepath.Join(dir, "autonomy-old"), filepath.Join(dir, "autonomy-recent")
	for _, p := range []string{old, recent} {
		if err := os.WriteFile(p, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * keep)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	path, _, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the unused binary is still there (%v)", err)
	}
	for _, p := range []string{recent, path} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
