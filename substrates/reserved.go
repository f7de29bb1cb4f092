package substrates

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
)

// Reserved is a path of an installation that belongs to autonomy: a file a substrate generates,
// or a folder that it, its runner or the writer fills. A behavior or a resource installed there
// would replace autonomy's own file (a behavior named manifest.json) or be replaced by it (a
// behavior under state/, where the runner keeps its database).
type Reserved struct {
	// Path is slash-separated, relative to the installation.
	Path string
	// Dir says Path is a folder: everything below it is reserved too.
	Dir bool
	// What says whose it is, for the message: "the manifest", "the runner's state".
	What string
}

// Layout is implemented by a substrate whose installation holds paths of its own besides the
// behaviors and resources it copies: every file its Compile generates and every folder its
// runner writes into at run time. CheckPaths refuses a profile whose copies would land there.
type Layout interface {
	// DataDir is the folder behaviors are installed under, at their path in the profile
	// (CopyProfile's dataDir). Resources may not go inside it.
	DataDir() string
	// Reserved lists the paths an installation of p owns. Built from the substrate's own path
	// constants; a test compiles profiles and checks that every generated file is listed.
	Reserved(p *ir.Profile) []Reserved
}

// WriterReserved lists the paths every installation holds whatever its substrate: the writer's
// ledgers and staging folders (removed at the start of every install), and the policy file every
// substrate installs (PolicyPath) and the overlay weaving config (resolved.WeaveFile). git's own directory is refused at any depth by the output path
// rules.
func WriterReserved() []Reserved {
	return []Reserved{
		{Path: PolicyPath, What: "the profile's policy block, for the agents"},
		{Path: ".autonomy/" + resolved.WeaveFile, What: "the overlay weaving config, read as every skill session starts"},
		{Path: ledgerDir, Dir: true, What: "compile's ledgers of what it generated"},
		{Path: stagePrefix, What: "compile's staging folders, removed at every install"},
	}
}

// CheckPaths reports, at the position of the path in the profile, every behavior and resource
// that an install of p by one of subs would put on a path autonomy owns (the substrate's
// Reserved paths, the writer's, anything inside .git) or outside the installation; so is the
// overlay package policy.box.overlays names, at that key.
func CheckPaths(r *resolved.Profile, subs ...Substrate) ir.Diagnostics {
	p := r.Profile
	var diags ir.Diagnostics
	seen := map[string]bool{}
	report := func(pos ir.Pos, format string, args ...any) {
		d := ir.Diagnostic{File: p.File, Pos: pos, Severity: ir.Error, Message: fmt.Sprintf(format, args...), Hint: "rename or move it in the profile"}
		if !seen[d.String()] {
			seen[d.String()] = true
			diags = append(diags, d)
		}
	}
	for _, s := range subs {
		lay, ok := s.(Layout)
		if !ok {
			continue
		}
		reserved := append(WriterReserved(), lay.Reserved(p)...)
		dataDir := lay.DataDir()
		type verdict struct{ at, why string }
		checked := map[string]verdict{} // actors of one role share a behavior: look at it once
		for _, a := range p.Actors {
			if a.BehaviorFile == "" {
				continue // not resolved: Validate has reported why
			}
			src, isDir := a.BehaviorSource()
			v, done := checked[src]
			if !done {
				v.at, v.why = collision(p.Dir, src, dataDir+"/"+src, isDir, reserved)
				checked[src] = v
			}
			if at, why := v.at, v.why; why != "" {
				report(a.Behavior.Pos, "actor %q: behavior %q would be installed at %s, %s", a.Name.Value, a.Behavior.Value, at, why)
			}
		}
		if dir, pos := r.OverlayFolder, r.OverlayFolderPos; dir != "" {
			if at, why := collision(p.Dir, dir, dataDir+"/"+dir, true, reserved); why != "" {
				report(pos, "policy.box.overlays %q: the overlay package would be installed at %s, %s", dir, at, why)
			}
		}
		all := append(reserved, Reserved{Path: dataDir, Dir: true, What: "what " + s.Name() + " installs (behaviors and generated files)"})
		for _, r := range p.ResourceFiles {
			if at, why := collision(p.Dir, r.Source, r.Path, r.Dir, all); why != "" {
				report(r.Pos, "resource %q would be installed at %s, %s", r.Path, at, why)
			}
		}
	}
	return diags.Sort()
}

// collision says where and how installing the profile's src at dst would collide with a
// reserved path, or "" for why. A folder (isDir) collides as a whole or through a file it holds.
func collision(profileDir, src, dst string, isDir bool, reserved []Reserved) (at, why string) {
	if why := collides(dst, reserved); why != "" || !isDir {
		return dst, why
	}
	root := filepath.Join(profileDir, filepath.FromSlash(src))
	_ = filepath.WalkDir(root, func(full string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil // unreadable: Copy reports it
		}
		rel, err := filepath.Rel(root, full)
		if err != nil {
			return nil
		}
		file := dst + "/" + filepath.ToSlash(rel)
		if w := collides(file, reserved); w != "" {
			at, why = file, w
			return fs.SkipAll
		}
		return nil
	})
	return at, why
}

// collides says how a file installed at p would collide with a reserved path, or "".
func collides(p string, reserved []Reserved) string {
	if msg := pathProblem(p); msg != "" {
		return "where autonomy cannot install: " + msg
	}
	lp := strings.ToLower(p) // one file on a case-insensitive file system
	for _, r := range reserved {
		lr := strings.ToLower(r.Path)
		switch {
		case lp == lr:
			return "which is reserved for " + r.What
		case r.Path == stagePrefix && strings.HasPrefix(lp, lr), r.Dir && strings.HasPrefix(lp, lr+"/"):
			return fmt.Sprintf("inside %s, which is reserved for %s", strings.TrimSuffix(r.Path, "-")+dirMark(r), r.What)
		}
	}
	return ""
}

func dirMark(r Reserved) string {
	if r.Dir {
		return "/"
	}
	return ""
}
