package substrates

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// watchDurability records, in order, every sync the install asks for (the files it covers) and
// every rename, until the test ends.
func watchDurability(t *testing.T) *[]string {
	t.Helper()
	var events []string
	origSync, origRename := syncStaged, rename
	syncStaged = func(stage string, paths []string) error {
		events = append(events, "sync "+strings.Join(paths, " "))
		return origSync(stage, paths)
	}
	rename = func(from, to string) error {
		events = append(events, "rename "+from+" "+to)
		return origRename(from, to)
	}
	t.Cleanup(func() { syncStaged, rename = origSync, origRename })
	return &events
}

// TestWriteSyncsOnceBeforeTheFirstRename: an install of many files makes them durable in a
// couple of syncs, not one a file, and no file is renamed into place, nor the journal that vouches
// for it, before a sync covered it.
func TestWriteSyncsOnceBeforeTheFirstRename(t *testing.T) {
	for _, name := range []string{"fresh", "update"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var names []string
			for i := range 200 {
				names = append(names, fmt.Sprintf("w/f-%d.yml", i))
			}
			if name == "update" {
				mustWrite(t, dir, version(1, names...), WriteOptions{})
			}
			events := watchDurability(t)
			mustWrite(t, dir, version(2, names...), WriteOptions{})
			synced := map[string]bool{}
			syncs := 0
			for _, e := range *events {
				f := strings.Fields(e)
				switch f[0] {
				case "sync":
					syncs++
					for _, p := range f[1:] {
						synced[p] = true
					}
				case "rename":
					if !synced[f[1]] {
						t.Fatalf("%s renamed before it was synced; events:\n%s", filepath.Base(f[1]), strings.Join(*events, "\n"))
					}
				}
			}
			if syncs > 3 {
				t.Errorf("%d syncs for 200 files, want at most 3 (the files with the ledger, the journal)", syncs)
			}
			if drifts, err := Check(dir, version(2, names...)); err != nil || len(drifts) != 0 {
				t.Errorf("drift %+v, %v", drifts, err)
			}
		})
	}
}

// TestWriteMovesANewDirectoryAtOnce: files in a directory the install creates are staged in a
// copy of it and moved with one rename of the directory, modes kept; a file in an existing
// directory is moved on its own.
func TestWriteMovesANewDirectoryAtOnce(t *testing.T) {
	dir := t.TempDir()
	var names []string
	for i := range 200 {
		names = append(names, fmt.Sprintf("new/sub%d/f-%d.yml", i%3, i))
	}
	out := version(1, append(names, "top.yml")...)
	out.Files[0].Mode = 0o755
	events := watchDurability(t)
	mustWrite(t, dir, out, WriteOptions{})
	renames := 0
	for _, e := range *events {
		if strings.HasPrefix(e, "rename ") {
			renames++
		}
	}
	// The journal, the directory new, top.yml and the ledger.
	if renames != 4 {
		t.Errorf("%d renames, want 4:\n%s", renames, strings.Join(*events, "\n"))
	}
	if drifts, err := Check(dir, out); err != nil || len(drifts) != 0 {
		t.Errorf("drift %+v, %v", drifts, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "new", "sub0", "f-0.yml")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode: %v, %v", fi, err)
	}
	// The next version updates in place and removes what it drops, directories included.
	v2 := version(2, names[:10]...)
	mustWrite(t, dir, v2, WriteOptions{})
	if drifts, err := Check(dir, v2); err != nil || len(drifts) != 0 {
		t.Errorf("v2 drift %+v, %v", drifts, err)
	}
	if exists(dir, "top.yml") {
		t.Error("top.yml left")
	}
}

// failingSync makes the nth call of syncStaged (1-based) fail, as a full disk or an I/O error
// would make syncfs or fsync fail, until the test ends.
func failingSync(t *testing.T, n int) {
	t.Helper()
	calls := 0
	orig := syncStaged
	syncStaged = func(stage string, paths []string) error {
		calls++
		if calls == n {
			return errors.New("injected sync failure")
		}
		return orig(stage, paths)
	}
	t.Cleanup(func() { syncStaged = orig })
}

// TestWriteSyncFailureLeavesTheDirectoryAsItWas: when making the staged files durable fails (the
// files with the ledger, then the journal), the install fails with that error before any file is
// placed, and leaves the output directory byte for byte as it was, with no stage and no journal;
// the next install succeeds.
func TestWriteSyncFailureLeavesTheDirectoryAsItWas(t *testing.T) {
	names := []string{"a.yml", "new/b.yml", "w/c.yml", "w/d.yml", "w/e.yml", "w/f.yml"}
	for _, fresh := range []bool{true, false} {
		for n := 1; n <= 2; n++ {
			t.Run(fmt.Sprintf("fresh=%v/sync%d", fresh, n), func(t *testing.T) {
				dir := t.TempDir()
				if !fresh {
					mustWrite(t, dir, version(1, "a.yml", "w/c.yml", "gone.yml"), WriteOptions{})
				}
				before := snapshot(t, dir)
				failingSync(t, n)
				if _, err := Write(dir, version(2, names...), WriteOptions{}); err == nil || !strings.Contains(err.Error(), "injected sync failure") {
					t.Fatalf("got %v, want the sync's error", err)
				}
				sameTree(t, before, snapshot(t, dir))
				syncStaged = flushStaged
				mustWrite(t, dir, version(2, names...), WriteOptions{})
				if drifts, err := Check(dir, version(2, names...)); err != nil || len(drifts) != 0 {
					t.Errorf("drift %+v, %v", drifts, err)
				}
			})
		}
	}
}

// TestWriteSyncFailureAfterAnInterruptedInstall: an install that finds a pending journal syncs
// three times (its files, the settled ledger, its own journal); whichever fails, no file is
// placed, and the next install sees no hand edit and installs exactly its output.
func TestWriteSyncFailureAfterAnInterruptedInstall(t *testing.T) {
	for n := 1; n <= 3; n++ {
		t.Run(fmt.Sprintf("sync%d", n), func(t *testing.T) {
			dir := t.TempDir()
			mustWrite(t, dir, version(1, "a.yml", "b.yml"), WriteOptions{})
			v2 := version(2, "a.yml", "b.yml", "c/new.yml")
			writeFile(t, dir, journalPath("t"), string(encodeLedger("t", ledgerRowsOf(v2))), 0o644)
			writeFile(t, dir, "a.yml", string(v2.Files[0].Data), 0o644)
			failingSync(t, n)
			v3 := version(3, "a.yml", "b.yml", "d.yml")
			if _, err := Write(dir, v3, WriteOptions{}); err == nil || !strings.Contains(err.Error(), "injected sync failure") {
				t.Fatalf("got %v, want the sync's error", err)
			}
			if got := readFile(t, dir, "a.yml"); got != string(v2.Files[0].Data) {
				t.Errorf("a.yml changed after a failed sync: %q", got)
			}
			if exists(dir, "d.yml") {
				t.Error("d.yml placed after a failed sync")
			}
			syncStaged = flushStaged
			mustWrite(t, dir, v3, WriteOptions{})
			if drifts, err := Check(dir, v3); err != nil || len(drifts) != 0 {
				t.Errorf("drift %+v, %v", drifts, err)
			}
			if exists(dir, journalPath("t")) {
				t.Error("the journal outlived a completed install")
			}
		})
	}
}
