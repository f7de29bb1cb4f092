package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

// TestInstallIsTheSameOnAnyNumberOfCPUs: a generated fleet compiled and installed on one CPU and
// on eight (rendering, stamping, hashing and staging share the work out differently) gives the
// same files, byte for byte and mode for mode, the ledger included, on every target it declares.
func TestInstallIsTheSameOnAnyNumberOfCPUs(t *testing.T) {
	src := filepath.Join(t.TempDir(), "p")
	if err := write(src, Profile(1000, []string{"gh-actions", "local"})); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"gh-actions", "local"} {
		sub, ok := registry.Lookup(target)
		if !ok {
			t.Fatalf("no substrate %s", target)
		}
		var trees [2]map[string]string
		for k, procs := range []int{1, 8} {
			trees[k] = installOn(t, procs, sub, src)
		}
		if len(trees[0]) != len(trees[1]) {
			t.Fatalf("%s: %d files on 1 CPU, %d on 8", target, len(trees[0]), len(trees[1]))
		}
		for p, one := range trees[0] {
			if eight, ok := trees[1][p]; !ok || eight != one {
				t.Fatalf("%s: %s differs on 8 CPUs:\n%s", target, p, substrates.UnifiedDiff(p, []byte(one), []byte(eight)))
			}
		}
		if len(trees[0]) < 1000 {
			t.Fatalf("%s: %d files for 1,000 actors", target, len(trees[0]))
		}
	}
}

// installOn compiles and installs the profile in src for sub into a new directory with GOMAXPROCS
// procs, and returns every file there as its mode and bytes, by path.
func installOn(t *testing.T, procs int, sub substrates.Substrate, src string) map[string]string {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	p, diags, err := ir.Check(src)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v\n%s", err, diags)
	}
	r, pd := playbook.Resolve(p)
	if pd.HasErrors() {
		t.Fatal(pd)
	}
	dir := t.TempDir()
	out, err := substrates.Compile(sub, r, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := substrates.Write(dir, &out, substrates.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	tree := map[string]string{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		tree[filepath.ToSlash(rel)] = info.Mode().String() + "\n" + string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tree[".autonomy/generated/"+sub.Name()+".json"]; !ok {
		t.Fatalf("%s: no ledger", sub.Name())
	}
	return tree
}
