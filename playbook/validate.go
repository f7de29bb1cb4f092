package playbook

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/capsule"
	"github.com/autonomyhq/autonomy/playbook/internal/source"
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
	// Packages are the overlay packages found, by folder.
	Packages []*overlay.Package
}

// ValidatePaths validates files and directories of playbooks. A file is read in the format Detect
// gives it (an error when it cannot tell); a directory is walked (hidden folders and symbolic
// links are skipped) and the files Detect is sure of are read. Every capsule playbook read is one
// library for the library-wide rules. A folder holding _index.md is an overlay package: every
// markdown file below it except README.md and _*.md is an overlay, and the index is checked; an
// overlay outside any such folder belongs to the package of the directory given.
func ValidatePaths(paths []string) *Result {
	v := newValidation()
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
		v.jobs = append(v.jobs, &job{path: path, explicit: true})
	}
	return v.finish()
}

func newValidation() *validation {
	return &validation{res: &Result{}, packages: map[string]*overlay.Package{}, implicit: map[string]bool{}}
}

// finish reads every file queued and runs the rules that span files.
func (v *validation) finish() *Result {
	v.runAll()
	for r, pkg := range v.packages {
		if len(pkg.Overlays) == 0 && v.implicit[r] {
			delete(v.packages, r)
		}
	}
	var roots []string
	for root := range v.packages {
		roots = append(roots, root)
	}
	sort.Strings(roots)
	for _, root := range roots {
		pkg := v.packages[root]
		v.res.Packages = append(v.res.Packages, pkg)
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
	jobs     []*job
	// implicit are the packages of directory arguments without an _index.md of their own: they
	// are packages only if an overlay turns up in them.
	implicit map[string]bool
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
func (v *validation) dir(root string) { v.walk(root, false) }

// walk queues the files below root; asPackage makes root an overlay package even without an
// _index.md (the folder `playbook index` is writing one for).
func (v *validation) walk(root string, asPackage bool) {
	root = filepath.Clean(root) // "playbooks/" is the package "playbooks"
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
			if d.Type()&fs.ModeSymlink != 0 && (overlay.IsOverlayFile(path) || candidateExt(path)) {
				v.res.Diagnostics = append(v.res.Diagnostics, ir.Diagnostic{File: path, Pos: ir.Pos{Line: 1, Col: 1}, Severity: ir.Warning,
					Message: "a symbolic link is not followed: it is not checked (and not installed as part of a package)", Hint: "copy the file here instead of linking it"})
			}
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
	if asPackage {
		packageRoots[root] = true
	}
	for r := range packageRoots {
		v.packageAt(r)
	}
	if !packageRoots[root] && v.packages[root] == nil {
		v.implicit[root] = true
	}
	for _, path := range files {
		if pkgRoot := nearest(path, root, packageRoots); pkgRoot != "" && overlay.IsOverlayFile(path) {
			v.jobs = append(v.jobs, &job{path: path, inPackage: true, pkg: v.packageAt(pkgRoot)})
			continue
		}
		v.jobs = append(v.jobs, &job{path: path, pkg: v.packageAt(root)})
	}
}

// candidateExt reports whether a file name has the extension of some playbook format.
func candidateExt(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md", ".markdown", ".yml", ".yaml", ".json":
		return true
	}
	return false
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

// job is one file to read: its format when known (an overlay of a package), whether the user
// named it (so a guess of Detect is read too), and the package an overlay joins.
type job struct {
	path     string
	format   Format
	explicit bool
	// inPackage says the file is a markdown file inside an overlay package: an overlay, unless
	// it is recognizably a capsule or step playbook kept there.
	inPackage bool
	pkg       *overlay.Package
	// Results, filled by run.
	read    bool
	diags   ir.Diagnostics
	failure error
	capsule *capsule.Playbook
	overlay *overlay.Overlay
	steps   *steps.Playbook
	flow    *workflow.Workflow
}

// runAll reads the files on every CPU; the results are merged in job order, so the output does
// not depend on scheduling.
func (v *validation) runAll() {
	// A file queued twice (a behavior inside the overlay folder, a file inside a folder also given)
	// is read once, as first queued.
	seen := map[string]*job{}
	var jobs []*job
	for _, j := range v.jobs {
		key := filepath.Clean(j.path)
		if first := seen[key]; first != nil {
			// Named explicitly as well: it is read whatever Detect thinks of it.
			first.explicit = first.explicit || j.explicit
			continue
		}
		seen[key] = j
		jobs = append(jobs, j)
	}
	var wg sync.WaitGroup
	next := make(chan *job)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				j.run()
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	for _, j := range jobs {
		if j.failure != nil {
			v.fail(j.path, j.failure)
			continue
		}
		if !j.read {
			continue
		}
		v.res.Files = append(v.res.Files, File{Path: j.path, Format: j.format})
		v.res.Diagnostics = append(v.res.Diagnostics, j.diags...)
		switch {
		case j.capsule != nil:
			v.res.Capsules = append(v.res.Capsules, j.capsule)
		case j.overlay != nil:
			v.res.Overlays = append(v.res.Overlays, j.overlay)
			if j.pkg != nil {
				j.pkg.Overlays = append(j.pkg.Overlays, j.overlay)
			}
		case j.steps != nil:
			v.res.Steps = append(v.res.Steps, j.steps)
		case j.flow != nil:
			v.res.Workflows = append(v.res.Workflows, j.flow)
		}
	}
}

func tooLargeMessage(e *source.TooLargeError) string {
	if e.Size < 0 {
		return "the file grew while it was read: too large for a playbook"
	}
	return fmt.Sprintf("the file is %d bytes: too large for a playbook", e.Size)
}

// run reads and checks the job's file.
func (j *job) run() {
	data, err := source.ReadFile(j.path, MaxFileSize)
	var tooLarge *source.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		if j.explicit || j.format != Unknown {
			j.read = true
			j.diags = ir.Diagnostics{{File: j.path, Pos: ir.Pos{Line: 1, Col: 1}, Severity: ir.Error,
				Message: tooLargeMessage(tooLarge), Hint: fmt.Sprintf("split it: a playbook file is at most %d bytes", MaxFileSize)}}
		}
		return
	case err != nil:
		j.failure = err
		return
	}
	if j.format == Unknown {
		f, sure := Detect(j.path, data)
		switch {
		case j.inPackage && !(sure && (f == Capsule || f == Steps)):
			f = Overlay
		case !sure && !j.explicit:
			return
		}
		j.format = f
	}
	j.read = true
	switch j.format {
	case Capsule:
		j.capsule, j.diags = capsule.Check(j.path, data)
	case Overlay:
		j.overlay, j.diags = overlay.Check(j.path, data)
	case Steps:
		j.steps, j.diags = steps.Check(j.path, data)
	case Workflow:
		j.flow, j.diags = workflow.Check(j.path, data)
	default:
		j.diags = ir.Diagnostics{{File: j.path, Pos: ir.Pos{Line: 1, Col: 1}, Severity: ir.Error,
			Message: "cannot tell which playbook format this file is",
			Hint:    "a capsule playbook has type: playbook in its frontmatter, an overlay schema: playbooks/v1, a step playbook ## STEP 1: headings, a workflow (.yml, .yaml, .json) a steps: list"}}
	}
}

// LoadPackage reads the overlay package dir as `playbook index` does: every markdown file below
// it except README.md, _*.md and the capsule and step playbooks kept there is an overlay. The
// diagnostics are the overlays' own (not the index's); the error is an I/O failure.
func LoadPackage(dir string) (*overlay.Package, ir.Diagnostics, error) {
	dir = filepath.Clean(dir)
	v := newValidation()
	v.walk(dir, true)
	v.runAll()
	if len(v.res.Failures) > 0 {
		f := v.res.Failures[0]
		return nil, nil, fmt.Errorf("%s: %s", f.Path, f.Error)
	}
	pkg := v.packages[dir]
	var diags ir.Diagnostics
	overlays := map[string]bool{}
	for _, f := range v.res.Files {
		overlays[f.Path] = f.Format == Overlay
	}
	for _, d := range v.res.Diagnostics {
		if overlays[d.File] {
			diags = append(diags, d)
		}
	}
	return pkg, diags.Sort(), nil
}
