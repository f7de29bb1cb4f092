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
	const n = 3
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

// TestPruneRemovesUnusedBinaries: a build's prune removes the binaries no test asked for in a
// day, and keeps the others and the one just built.
func TestPruneRemovesUnusedBinaries(t *testing.T) {
	dir := t.TempDir()
	old, recent, built := filepath.Join(dir, "autonomy-old"), filepath.Join(dir, "autonomy-recent"), filepath.Join(dir, "autonomy-built")
	past := time.Now().Add(-2 * keep)
	for _, p := range []string{old, recent, built} {
		if err := os.WriteFile(p, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
		if p != recent {
			if err := os.Chtimes(p, past, past); err != nil {
				t.Fatal(err)
			}
		}
	}
	prune(dir, built)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the unused binary is still there (%v)", err)
	}
	for _, p := range []string{recent, built} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestSourceKey: the key changes with what the binary is built from (Go source, go.mod, an
// embedded file) and not with tests, .git or build outputs.
func TestSourceKey(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{"go.mod": "module m\n", "a.go": "package a\n", "probe/x.txt": "x\n",
		"a_test.go": "package a\n", ".git/HEAD": "ref: main\n", "bin/autonomy": "old\n", "cpu.prof": "p\n"}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	key := func() string {
		k, err := SourceKey(root)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := key()
	for name, changes := range map[string]bool{"a.go": true, "go.mod": true, "probe/x.txt": true, "new.go": true,
		"a_test.go": false, ".git/HEAD": false, "bin/autonomy": false, "cpu.prof": false} {
		if err := os.WriteFile(filepath.Join(root, name), []byte("changed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := key(); (got != base) != changes {
			t.Errorf("after a change to %s the key is %s (was %s); want a new key: %v", name, got, base, changes)
		}
		base = key()
	}
}
