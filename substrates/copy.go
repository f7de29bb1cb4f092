package substrates

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
)

// MaxCopy bounds one copied file, as ir bounds a profile: a behavior or resource is text a person
// wrote, and a runaway file should fail the compile rather than fill the install.
const MaxCopy = 32 << 20

// Copy reads the file or folder src of the profile directory (slash-separated, relative, as ir
// validated it) into files installed under dst, verbatim. A folder is copied recursively,
// regular files only; a symlink is followed only when it stays inside the profile directory.
// A file keeps its executable bit: 0o755 when its owner may execute it, 0o644 otherwise.
func Copy(profileDir, src, dst string) ([]File, error) {
	root, err := filepath.EvalSymlinks(profileDir)
	if err != nil {
		return nil, err
	}
	c := copier{root: root}
	if err := c.copy(src, dst); err != nil {
		return nil, err
	}
	return c.files, nil
}

type copier struct {
	root  string
	files []File
	depth int
}

func (c *copier) copy(src, dst string) error {
	full, err := c.resolve(src)
	if err != nil {
		return err
	}
	fi, err := os.Stat(full)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		if c.depth++; c.depth > 64 {
			return fmt.Errorf("%s: folders nested too deep (a symlink loop?)", src)
		}
		entries, err := os.ReadDir(full)
		if err != nil {
			return err
		}
		for _, e := range entries { // ReadDir sorts by name: the output order is stable
			if err := c.copy(path.Join(src, e.Name()), path.Join(dst, e.Name())); err != nil {
				return err
			}
		}
		c.depth--
	case fi.Mode().IsRegular():
		if fi.Size() > MaxCopy {
			return fmt.Errorf("%s: %d bytes is over the %d MiB limit for a copied file", src, fi.Size(), MaxCopy>>20)
		}
		data, err := os.ReadFile(full)
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if fi.Mode()&0o100 != 0 {
			mode = 0o755
		}
		c.files = append(c.files, File{Path: dst, Data: data, Mode: mode})
	default:
		return fmt.Errorf("%s: not a regular file or folder", src)
	}
	return nil
}

// resolve returns the real path of src, refusing one that leads out of the profile directory.
func (c *copier) resolve(src string) (string, error) {
	real, err := filepath.EvalSymlinks(filepath.Join(c.root, filepath.FromSlash(src)))
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(c.root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s: leads out of the profile directory through a symlink", src)
	}
	return real, nil
}

// copySuccessors installs, for each actor whose behavior is a superseded capsule playbook, the
// successor a new run follows (resolved.Lifecycle), at its path in the profile.
func copySuccessors(r *resolved.Profile, dataDir string, copied map[string]bool, add func(f File, producer string, pos ir.Pos)) ir.Diagnostics {
	var diags ir.Diagnostics
	for _, a := range r.Profile.Actors {
		lc := r.Behavior(a).Lifecycle
		if lc == nil || lc.Successor == "" || copied[lc.Successor] {
			continue
		}
		copied[lc.Successor] = true
		files, err := Copy(r.Profile.Dir, lc.Successor, dataDir+"/"+lc.Successor)
		if err != nil {
			diags = append(diags, ir.Diagnostic{File: r.Profile.File, Pos: a.Behavior.Pos, Severity: ir.Error,
				Message: fmt.Sprintf("actor %q: the successor %s of its superseded behavior cannot be copied: %v", a.Name.Value, lc.Successor, err), Hint: "fix the file, then compile again"})
			continue
		}
		for _, f := range files {
			add(f, "the successor "+lc.Successor+" of "+a.BehaviorFile, a.Behavior.Pos)
		}
	}
	return diags
}

// CopyProfile installs every behavior (a skill's whole folder, or a script, made executable)
// and the overlay package (see copyOverlays) under dataDir at their paths in the profile, and
// every resource at its install path, calling add
// for each file with what produced it. Actors of one role share a behavior: it is copied once.
// A resource inside dataDir, which target generates, or a file that cannot be read is reported.
func CopyProfile(r *resolved.Profile, target, dataDir string, add func(f File, producer string, pos ir.Pos)) ir.Diagnostics {
	p := r.Profile
	var diags ir.Diagnostics
	copied := map[string]bool{}
	for _, a := range p.Actors {
		src, _ := a.BehaviorSource()
		if copied[src] {
			continue
		}
		copied[src] = true
		files, err := Copy(p.Dir, src, dataDir+"/"+src)
		if err != nil {
			diags = append(diags, ir.Diagnostic{File: p.File, Pos: a.Behavior.Pos, Severity: ir.Error,
				Message: fmt.Sprintf("actor %q: behavior cannot be copied: %v", a.Name.Value, err), Hint: "fix the file, then compile again"})
			continue
		}
		for _, f := range files {
			if !a.Skill {
				f.Mode = 0o755 // a script behavior is what the runner executes
			}
			add(f, "the behavior "+src, a.Behavior.Pos)
		}
	}
	diags = append(diags, copySuccessors(r, dataDir, copied, add)...)
	diags = append(diags, copyOverlays(r, dataDir, copied, add)...)
	for _, r := range p.ResourceFiles {
		if r.Path == dataDir || strings.HasPrefix(r.Path, dataDir+"/") {
			diags = append(diags, ir.Diagnostic{File: p.File, Pos: r.Pos, Severity: ir.Error,
				Message: fmt.Sprintf("resource %q would be installed inside %s/, which %s generates", r.Path, dataDir, target),
				Hint:    "keep resources out of " + dataDir + "/"})
			continue
		}
		files, err := Copy(p.Dir, r.Source, r.Path)
		if err != nil {
			diags = append(diags, ir.Diagnostic{File: p.File, Pos: r.Pos, Severity: ir.Error,
				Message: fmt.Sprintf("resource %q cannot be copied: %v", r.Path, err), Hint: "fix the file, then compile again"})
			continue
		}
		for _, f := range files {
			add(f, "the resource "+r.Path, r.Pos)
		}
	}
	return diags
}
