// Package golden holds the committed compile output of every bundled profile, and of the test
// profiles listed in testProfiles, for every target it declares that this build implements
// (and the pairs listed in undeclared): golden/<profile>/<target>/…. The test compiles and compares
// byte for byte; `go test ./golden -update` (or `make golden`) rewrites the files, and every
// rewritten line is reviewed before it is committed.
package golden

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current compiler")

// target is one profile compiled for one target, and the directory holding its golden output.
type target struct {
	profile string // profile directory
	sub     substrates.Substrate
	dir     string // golden directory
}

// testProfiles are profiles kept as test data elsewhere whose output is kept here too, each
// under its directory's name (which no profile of ../profiles may share).
var testProfiles = []string{
	// A profile written in the style of the reference implementation's (agents:, bare behavior
	// names, a TypeScript script, the reference's gh-actions keys and review contract).
	"../ir/testdata/reference/oa-fleet/ir.yml",
}

// undeclared are (profile, target) pairs compared although the profile does not declare the
// target, each with why (its comment): compile warns and compiles them all the same.
var undeclared = []struct{ profile, target string }{
	// The smallest fleet on Kubernetes, the output docs/kubernetes.md installs: hello declares
	// only the targets where its greeter can post (a cluster issues no code-host credential).
	{"../profiles/hello", "kubernetes"},
}

// targets lists every (profile, target) pair to compare: each profile in ../profiles and of
// testProfiles, for each target it declares that the registry implements, and undeclared.
func targets(t *testing.T) []target {
	t.Helper()
	matches, err := filepath.Glob("../profiles/*/ir.yml")
	if err != nil || len(matches) == 0 {
		t.Fatalf("no profiles found: %v", err)
	}
	for _, m := range testProfiles {
		for _, p := range matches {
			if filepath.Base(filepath.Dir(p)) == filepath.Base(filepath.Dir(m)) {
				t.Fatalf("%s and %s would share golden/%s", p, m, filepath.Base(filepath.Dir(m)))
			}
		}
	}
	matches = append(matches, testProfiles...)
	var out []target
	for _, m := range matches {
		dir := filepath.Dir(m)
		p, diags, err := ir.Check(dir)
		if err != nil || diags.HasErrors() {
			t.Fatalf("%s: %v\n%s", dir, err, diags)
		}
		for _, tv := range p.Targets {
			sub, ok := registry.Lookup(tv.Value)
			if !ok {
				continue // declared, not implemented in this build: nothing to compare
			}
			out = append(out, target{dir, sub, filepath.Join(filepath.Base(dir), sub.Name())})
		}
	}
	for _, u := range undeclared {
		if sub, ok := registry.Lookup(u.target); ok {
			out = append(out, target{u.profile, sub, filepath.Join(filepath.Base(u.profile), sub.Name())})
		}
	}
	return out
}

func compile(t *testing.T, tg target) substrates.Output {
	t.Helper()
	p, diags, err := ir.Check(tg.profile)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%s: %v\n%s", tg.profile, err, diags)
	}
	r, diags := playbook.Resolve(p)
	if diags.HasErrors() {
		t.Fatalf("%s: %s", tg.profile, diags)
	}
	out, err := substrates.Compile(tg.sub, r, tg.dir)
	if err != nil {
		t.Fatalf("%s: compile for %s: %v", tg.profile, tg.sub.Name(), err)
	}
	return out
}

// onDisk reads every file under dir: slash path → bytes.
func onDisk(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && path == dir {
				return fs.SkipDir
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestGolden(t *testing.T) {
	tgs := targets(t)
	if len(tgs) == 0 {
		t.Fatal("no profile declares a target this build implements")
	}
	for _, tg := range tgs {
		t.Run(tg.dir, func(t *testing.T) {
			out := compile(t, tg)
			if *update {
				rewrite(t, tg.dir, out)
			}
			disk := onDisk(t, tg.dir)
			for _, f := range out.Files {
				got, ok := disk[f.Path]
				switch {
				case !ok:
					t.Errorf("%s/%s is missing: run go test ./golden -update and review it", tg.dir, f.Path)
				case !bytes.Equal(got, f.Data):
					t.Errorf("%s/%s differs from the compiler's output (go test ./golden -update rewrites it; review the diff):\n%s",
						tg.dir, f.Path, substrates.UnifiedDiff(f.Path, got, f.Data))
				}
				delete(disk, f.Path)
			}
			for _, stale := range sortedKeys(disk) {
				t.Errorf("%s/%s is not produced any more: go test ./golden -update deletes it", tg.dir, stale)
			}
		})
	}
}

// rewrite replaces dir's content with out.
func rewrite(t *testing.T, dir string, out substrates.Output) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range out.Files {
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, f.Mode); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeterministic: two compiles of every profile give identical bytes.
func TestDeterministic(t *testing.T) {
	for _, tg := range targets(t) {
		a, b := compile(t, tg), compile(t, tg)
		if len(a.Files) != len(b.Files) {
			t.Fatalf("%s: %d files, then %d", tg.dir, len(a.Files), len(b.Files))
		}
		for i := range a.Files {
			if a.Files[i].Path != b.Files[i].Path || !bytes.Equal(a.Files[i].Data, b.Files[i].Data) || a.Files[i].Mode != b.Files[i].Mode {
				t.Errorf("%s: %s differs between two compiles", tg.dir, a.Files[i].Path)
			}
		}
		if a.Warnings.String() != b.Warnings.String() {
			t.Errorf("%s: warnings differ between two compiles", tg.dir)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
