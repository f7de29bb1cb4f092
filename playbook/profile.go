package playbook

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/playbook/engine"
	"github.com/autonomyhq/autonomy/playbook/overlay"
)

// DefaultOverlayDir is the folder of a profile that holds its overlay package, unless
// policy.box.overlays names another.
const DefaultOverlayDir = "playbooks"

// OverlaysKey is the policy.box key naming the profile's overlay package folder.
const OverlaysKey = "overlays"

// ProfilePlaybooks is what of a profile is playbooks.
type ProfilePlaybooks struct {
	// Behaviors maps each behavior file that is a playbook (relative to the profile directory,
	// slash-separated) to its format.
	Behaviors map[string]Format
	// OverlayDir is the overlay package's folder relative to the profile directory
	// (slash-separated); "" when the profile has none. Package is the package read from it.
	OverlayDir string
	Package    *overlay.Package
	// Result is the validation of every playbook above.
	Result *Result
}

// Profile finds and validates the playbooks a validated profile uses: actor behaviors that are
// capsule, step or workflow playbook files, and the overlay package (DefaultOverlayDir, or the
// folder policy.box.overlays names). Their diagnostics are positioned in their own files. A stale
// or missing _index.md is a warning here: the index is derived data, compile installs it as
// generated, and `autonomy check` reports the profile's stale copy as drift (IndexDrift).
func Profile(p *ir.Profile) (*ProfilePlaybooks, ir.Diagnostics) {
	pp := &ProfilePlaybooks{Behaviors: map[string]Format{}}
	var diags ir.Diagnostics
	v := newValidation()
	for _, a := range p.Actors {
		if a.BehaviorFile == "" || path.Base(a.BehaviorFile) == ir.SkillFile {
			continue
		}
		if _, done := pp.Behaviors[a.BehaviorFile]; done {
			continue
		}
		full := filepath.Join(p.Dir, filepath.FromSlash(a.BehaviorFile))
		data, err := readHead(full)
		if err != nil {
			continue // ir reported an unreadable behavior
		}
		switch f, sure := Detect(full, data); {
		case !sure:
		case f == Overlay:
			diags = append(diags, ir.Diagnostic{File: p.File, Pos: a.Behavior.Pos, Severity: ir.Error,
				Message: "actor \"" + a.Name.Value + "\": behavior " + a.BehaviorFile + " is an overlay (schema: playbooks/v1); an overlay is woven into a skill, never run on its own",
				Hint:    "keep it in the overlay package (" + DefaultOverlayDir + "/), and give the actor a skill, script or playbook"})
		case f == Capsule || f == Steps || f == Workflow:
			pp.Behaviors[a.BehaviorFile] = f
			v.jobs = append(v.jobs, &job{path: full, format: f, explicit: true})
		}
	}
	dir, dd := overlayDir(p)
	diags = append(diags, dd...)
	_, pd := ReadPersona(p)
	_, ed := ReadEvolve(p)
	diags = append(append(diags, pd...), ed...)
	if dir != "" {
		pp.OverlayDir = dir
		v.walk(filepath.Join(p.Dir, filepath.FromSlash(dir)), true)
	}
	pp.Result = v.finish()
	for _, pkg := range pp.Result.Packages {
		if dir != "" && pkg.Dir == filepath.Join(p.Dir, filepath.FromSlash(dir)) {
			pp.Package = pkg
		}
	}
	for _, d := range pp.Result.Diagnostics {
		if filepath.Base(d.File) == overlay.IndexFile && d.Severity == ir.Error {
			d.Severity = ir.Warning
			d.Message += "; autonomy check reports it as drift"
		}
		diags = append(diags, d)
	}
	diags = append(diags, checkVerification(p, pp.Result.Capsules)...)
	diags = append(diags, checkMCP(p, pp.Result.Workflows)...)
	for _, w := range pp.Result.Workflows {
		diags = append(diags, engine.CheckCLI(w, resolved.CLIOf(p.Policy))...)
		diags = append(diags, engine.CheckWeb(w, resolved.WebOf(p.Policy))...)
	}
	for _, f := range pp.Result.Failures {
		diags = append(diags, ir.Diagnostic{File: f.Path, Pos: ir.Pos{Line: 1, Col: 1}, Severity: ir.Error, Message: "cannot be read: " + f.Error})
	}
	if pp.Package != nil && len(pp.Package.Overlays) == 0 {
		pp.Package, pp.OverlayDir = nil, "" // a folder of playbooks, no overlay in it
	}
	return pp, diags.Sort()
}

// readHead reads a behavior file for detection (a playbook is at most a few MiB).
func readHead(path string) ([]byte, error) { return overlay.ReadFile(path, MaxFileSize) }

// overlayDir returns the profile's overlay package folder: policy.box.overlays when set (it must
// be a folder inside the profile), else DefaultOverlayDir when that folder exists, else "".
func overlayDir(p *ir.Profile) (string, ir.Diagnostics) {
	key, val := boxKey(p.Policy.Box, OverlaysKey)
	if key == nil {
		info, err := os.Stat(filepath.Join(p.Dir, DefaultOverlayDir))
		if err == nil && info.IsDir() {
			return DefaultOverlayDir, nil
		}
		return "", nil
	}
	bad := func(msg, hint string) (string, ir.Diagnostics) {
		return "", ir.Diagnostics{{File: p.File, Pos: ir.Pos{Line: val.Line, Col: val.Column}, Severity: ir.Error,
			Message: "policy.box." + OverlaysKey + " " + msg, Hint: hint}}
	}
	if val.Kind != yaml.ScalarNode || val.Tag != "!!str" || strings.TrimSpace(val.Value) == "" {
		return bad("must be a folder of the profile", "e.g. overlays: playbooks")
	}
	rel := filepath.ToSlash(filepath.Clean(val.Value))
	if filepath.IsAbs(val.Value) || rel == ".." || strings.HasPrefix(rel, "../") || rel == "." {
		return bad("leads out of the profile directory", "name a folder inside the profile, e.g. overlays: playbooks")
	}
	root, err1 := filepath.EvalSymlinks(p.Dir)
	real, err2 := filepath.EvalSymlinks(filepath.Join(p.Dir, filepath.FromSlash(rel)))
	if err1 != nil || err2 != nil {
		return bad("names no folder: "+rel+" does not exist", "create it, or fix the path")
	}
	if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return bad("leads out of the profile directory through a symlink", "copy the overlays into the profile")
	}
	if info, err := os.Stat(real); err != nil || !info.IsDir() {
		return bad("names no folder: "+rel+" is not a directory", "name the folder holding the overlays")
	}
	return rel, nil
}

// OverlayFolder is the folder policy.box.overlays names, as overlayDir accepts it, with the
// position of the value: where an install puts the package is checked against the paths autonomy
// owns (substrates.CheckPaths). "" when the key is absent (the default folder, playbooks, owns no
// such path) or refused (Profile says why).
func OverlayFolder(p *ir.Profile) (string, ir.Pos) {
	_, val := boxKey(p.Policy.Box, OverlaysKey)
	if val == nil {
		return "", ir.Pos{}
	}
	dir, diags := overlayDir(p)
	if len(diags) > 0 {
		return "", ir.Pos{}
	}
	return dir, ir.Pos{Line: val.Line, Col: val.Column}
}

// boxKey finds key in the policy.box mapping: its key node and value node, or nils.
func boxKey(box *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if box == nil || box.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(box.Content); i += 2 {
		if box.Content[i].Value == key {
			return box.Content[i], box.Content[i+1]
		}
	}
	return nil, nil
}

// IndexDrift compares the profile's overlay index with what `playbook index` would write: the
// index file (inside the profile directory), its bytes on disk (nil when missing) and the
// expected bytes. file is "" when the profile has no overlay package.
func (pp *ProfilePlaybooks) IndexDrift() (file string, have, want []byte) {
	if pp.Package == nil {
		return "", nil, nil
	}
	file = filepath.Join(pp.Package.Dir, overlay.IndexFile)
	have, _ = os.ReadFile(file)
	return file, have, overlay.Index(pp.Package.Overlays)
}
