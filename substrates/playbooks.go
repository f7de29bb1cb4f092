package substrates

import (
	"fmt"
	"path"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
)

// copyOverlays installs the profile's overlay package under dataDir at its path in the profile:
// every file verbatim, except _index.md, which is installed as `playbook index` generates it (a
// stale copy in the profile is check's drift, not the install's), and dataDir/weave.json, which
// tells the runtime where the package is and what persona it protects. Files already installed as
// behaviors (a playbook kept in the package folder) are skipped. Behaviors that are playbook
// files are installed by CopyProfile like any other behavior, verbatim.
func copyOverlays(r *resolved.Profile, dataDir string, copied map[string]bool, add func(f File, producer string, pos ir.Pos)) ir.Diagnostics {
	o, p := r.Overlays, r.Profile
	if o == nil {
		return nil
	}
	producer := "the overlay package " + o.Dir
	files, err := Copy(p.Dir, o.Dir, dataDir+"/"+o.Dir)
	if err != nil {
		return ir.Diagnostics{{File: p.File, Pos: ir.Pos{Line: 1, Col: 1}, Severity: ir.Error,
			Message: fmt.Sprintf("the overlay package %s cannot be copied: %v", o.Dir, err), Hint: "fix the file, then compile again"}}
	}
	indexPath := dataDir + "/" + o.Dir + "/" + o.IndexFile
	index := File{Path: indexPath, Data: o.Index, Mode: 0o644}
	for _, f := range files {
		src := strings.TrimPrefix(f.Path, dataDir+"/")
		if behaviorCopied(src, copied) {
			continue
		}
		if f.Path == indexPath {
			continue
		}
		add(f, producer, ir.Pos{})
	}
	add(index, producer, ir.Pos{})
	cfg, err := o.WeaveConfig(dataDir + "/" + o.Dir)
	if err != nil {
		return ir.Diagnostics{{File: p.File, Pos: ir.Pos{Line: 1, Col: 1}, Severity: ir.Error, Message: err.Error()}}
	}
	add(File{Path: dataDir + "/" + resolved.WeaveFile, Data: cfg, Mode: 0o644}, producer, ir.Pos{})
	return nil
}

// behaviorCopied reports whether src (relative to the profile) was installed as a behavior: the
// file itself, or a file of a skill folder.
func behaviorCopied(src string, copied map[string]bool) bool {
	for dir := src; dir != "." && dir != "/"; dir = path.Dir(dir) {
		if copied[dir] {
			return true
		}
	}
	return false
}
