package substrates

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/playbook/overlay"
)

// copyOverlays installs the profile's overlay package under dataDir at its path in the profile:
// every file verbatim, except _index.md, which is installed as `playbook index` generates it (a
// stale copy in the profile is check's drift, not the install's), and dataDir/weave.json, which
// tells the runtime where the package is and what persona it protects. Files already installed as
// behaviors (a playbook kept in the package folder) are skipped. Behaviors that are playbook
// files are installed by CopyProfile like any other behavior, verbatim.
func copyOverlays(p *ir.Profile, dataDir string, copied map[string]bool, add func(f File, producer string, pos ir.Pos)) ir.Diagnostics {
	pp, _ := playbook.Profile(p)
	if pp.Package == nil {
		return nil
	}
	producer := "the overlay package " + pp.OverlayDir
	files, err := Copy(p.Dir, pp.OverlayDir, dataDir+"/"+pp.OverlayDir)
	if err != nil {
		return ir.Diagnostics{{File: p.File, Pos: ir.Pos{Line: 1, Col: 1}, Severity: ir.Error,
			Message: fmt.Sprintf("the overlay package %s cannot be copied: %v", pp.OverlayDir, err), Hint: "fix the file, then compile again"}}
	}
	indexPath := dataDir + "/" + pp.OverlayDir + "/" + overlay.IndexFile
	index := File{Path: indexPath, Data: overlay.Index(pp.Package.Overlays), Mode: 0o644}
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
	persona, _ := playbook.ReadPersona(p)
	cfg, err := json.MarshalIndent(playbook.WeaveConfig{Package: dataDir + "/" + pp.OverlayDir, Persona: persona}, "", "  ")
	if err != nil {
		return ir.Diagnostics{{File: p.File, Pos: ir.Pos{Line: 1, Col: 1}, Severity: ir.Error, Message: err.Error()}}
	}
	add(File{Path: dataDir + "/" + playbook.WeaveFile, Data: append(cfg, '\n'), Mode: 0o644}, producer, ir.Pos{})
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
