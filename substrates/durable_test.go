package substrates

import (
	"fmt"
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
