package playbook

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/capsule"
	"github.com/autonomyhq/autonomy/playbook/overlay"
	"github.com/autonomyhq/autonomy/playbook/steps"
	"github.com/autonomyhq/autonomy/playbook/workflow"
)

// MaxFileSize is the largest file read at all; each format has its own, smaller, limit.
const MaxFileSize = 16 << 20

// IndexFormat marks an overlay package's _index.md in a Result.
const IndexFormat Format = "overlay-index"

// File is one file a validation read, and its format.
type File struct {
	Path   string `json:"file"`
	Format Format `json:"format"`
}

// Failure is a path that could not be read (an I/O error, not a playbook problem).
type Failure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// Result is what ValidatePaths found.
type Result struct {
	Files       []File
	Diagnostics ir.Diagnostics
	Failures    []Failure
	// Capsules, Overlays, Steps and Workflows are the playbooks read, for callers that use them.
	Capsules  []*capsule.Playbook
	Overlays  []*overlay.Overlay
	Steps     []*steps.Playbook
	Workflows []*workflow.Workflow
}

// ValidatePaths validates files and directories of playbooks. A file is read in the format Detect
// gives it (an error when it cannot tell); a directory is walked (hidden folders and symbolic
// links are skipped) and the files Detect is sure of are read. Every capsule playbook read is one
// library for the library-wide rules. A folder holding _index.md is an overlay package: every
// markdown file below it except README.md and _*.md is an overlay, and the index is checked; an
// overlay outside any such folder belongs to the package of the directory given.
func ValidatePaths(paths []string) *Result {
	v := &validation{res: &Result{}, packages: map[string]*overlay.Package{}}
	for _, path := range paths {
		info, err := os.Stat(path)
		if err != nil {
			v.fail(path, err)
			continue
		}
		if info.IsDir() {
			v.dir(path)
			continue
		}
		if !info.Mode().IsRegular() {
			v.fail(path, fmt.Errorf("not a regular file"))
			continue
		}
		v.file(path, Unknown, true)
	}
	var roots []string
	for root := range v.packages {
		roots = append(roots, root)
	}
	sort.Strings(roots)
	for _, root := range roots {
		pkg := v.packages[root]
		v.res.Files = append(v.res.Files, File{Path: filepath.Join(root, overlay.IndexFile), Format: IndexFormat})
		v.res.Diagnostics = append(v.res.Diagnostics, overlay.ValidatePackage(pkg)...)
	}
	v.res.Diagnostics = append(v.res.Diagnostics, capsule.ValidateLibrary(v.res.Capsules)...)
	v.res.Diagnostics = v.res.Diagnostics.Sort()
	return v.res
}

type validation struct {
	res      *Result
	packages map[string]*overlay.Package
	// pkg is the package the overlay being read belongs to (nil: none, the file stands alone).
	pkg *overlay.Package
}

func (v *validation) fail(path string, err error) {
	msg := err.Error()
	if os.IsNotExist(err) {
		msg = "no such file or directory"
	} else if pe, ok := err.(*fs.PathError); ok {
		msg = pe.Err.Error()
	}
	v.res.Failures = append(v.res.Failures, Failure{Path: path, Error: msg})
}

// dir walks a directory argument.
func (v *validation) dir(root string) {
	var files []string
	packageRoots := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if d.Name() == overlay.IndexFile {
			packageRoots[filepath.Dir(path)] = true
		}
		files = append(files, path)
		return nil
	})
	if err != nil {
		v.fail(root, err)
		return
	}
	for _, path := range files {
		if pkgRoot := nearest(path, root, packageRoots); pkgRoot != "" && overlay.IsOverlayFile(path) {
			v.pkg = v.packageAt(pkgRoot)
			v.file(path, Overlay, false)
			continue
		}
		v.pkg = v.packageAt(root)
		v.file(path, Unknown, false)
	}
	v.pkg = nil
	// A package without overlays (an implicit one that found none) is no package.
	for r, pkg := range v.packages {
		if len(pkg.Overlays) == 0 && !packageRoots[r] {
			delete(v.packages, r)
		}
	}
}

// nearest returns the closest folder holding an _index.md from path's folder up to root, or "".
func nearest(path, root string, roots map[string]bool) string {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if roots[dir] {
			return dir
		}
		if dir == root || dir == filepath.Dir(dir) || !strings.HasPrefix(dir, root) {
			return ""
		}
	}
}

func (v *validation) packageAt(dir string) *overlay.Package {
	pkg := v.packages[dir]
	if pkg == nil {
		pkg = &overlay.Package{Dir: dir}
		v.packages[dir] = pkg
	}
	return pkg
}

// file reads and checks one file. format is the format when known (an overlay of a package);
// explicit says the user named the file, so a guess of Detect is read too.
func (v *validation) file(path string, format Format, explicit bool) {
	info, err := os.Stat(path)
	if err != nil {
		v.fail(path, err)
		return
	}
	if info.Size() > MaxFileSize {
		if explicit || format != Unknown {
			v.res.Files = append(v.res.Files, File{Path: path, Format: format})
			v.res.Diagnostics = append(v.res.Diagnostics, ir.Diagnostic{File: path, Pos: ir.Pos{Line: 1, Col: 1}, Severity: ir.Error,
				Message: fmt.Sprintf("the file is %d bytes: too large for a playbook", info.Size())})
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		v.fail(path, err)
		return
	}
	if format == Unknown {
		f, sure := Detect(path, data)
		if !sure && !explicit {
			return
		}
		format = f
	}
	v.res.Files = append(v.res.Files, File{Path: path, Format: format})
	var diags ir.Diagnostics
	switch format {
	case Capsule:
		var p *capsule.Playbook
		if p, diags = capsule.Check(path, data); p != nil {
			v.res.Capsules = append(v.res.Capsules, p)
		}
	case Overlay:
		var o *overlay.Overlay
		if o, diags = overlay.Check(path, data); o != nil {
			v.res.Overlays = append(v.res.Overlays, o)
			if v.pkg != nil {
				v.pkg.Overlays = append(v.pkg.Overlays, o)
			}
		}
	case Steps:
		var p *steps.Playbook
		if p, diags = steps.Check(path, data); p != nil {
			v.res.Steps = append(v.res.Steps, p)
		}
	case Workflow:
		var w *workflow.Workflow
		if w, diags = workflow.Check(path, data); w != nil {
			v.res.Workflows = append(v.res.Workflows, w)
		}
	default:
		diags = ir.Diagnostics{{File: path, Pos: ir.Pos{Line: 1, Col: 1}, Severity: ir.Error,
			Message: "cannot tell which playbook format this file is",
			Hint:    "a capsule playbook has type: playbook in its frontmatter, an overlay schema: playbooks/v1, a step playbook ## STEP 1: headings, a workflow (.yml, .yaml, .json) a steps: list"}}
	}
	v.res.Diagnostics = append(v.res.Diagnostics, diags...)
}
