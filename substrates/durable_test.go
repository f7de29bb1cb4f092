package substrates

import (
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
