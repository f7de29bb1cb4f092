package substrates

import (
	"os"
	"path/filepath"

	"github.com/autonomyhq/autonomy/ir/resolved"
)

// IndexDrift is the profile's stale or missing overlay package index (its _index.md) as a drift of
// `autonomy check`, its path relative to dir, the directory check compares: the index is not a
// generated file of the install, but it is derived data a pull request must carry up to date.
func IndexDrift(r *resolved.Profile, dir string) []Drift {
	if r.Overlays == nil || r.Overlays.IndexFile == "" {
		return nil
	}
	file := filepath.Join(r.Dir, filepath.FromSlash(r.Overlays.Dir), r.Overlays.IndexFile)
	have, _ := os.ReadFile(file)
	if string(have) == string(r.Overlays.Index) {
		return nil
	}
	rel := file
	if abs, err := filepath.Abs(file); err == nil {
		if absDir, err := filepath.Abs(dir); err == nil {
			if r, err := filepath.Rel(absDir, abs); err == nil {
				rel = r
			}
		}
	}
	rel = filepath.ToSlash(rel)
	if have == nil {
		return []Drift{{Path: rel, Kind: Missing}}
	}
	return []Drift{{Path: rel, Kind: Changed, Diff: UnifiedDiff(rel, have, r.Overlays.Index)}}
}
