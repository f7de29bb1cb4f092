package substrates

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir/resolved"
)

// fakeSubstrate is a Substrate whose answers the test sets.
type fakeSubstrate struct {
	name    string
	support []Support
	out     Output
	err     error
	calls   int
}

func (f *fakeSubstrate) Name() string       { return f.name }
func (f *fakeSubstrate) Aliases() []string  { return nil }
func (f *fakeSubstrate) Support() []Support { return f.support }
func (f *fakeSubstrate) Compile(*resolved.Profile) (Output, error) {
	f.calls++
	return f.out, f.err
}

// output builds an Output of target with files sorted by path, as a substrate must.
func output(target string, files ...File) *Output {
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return &Output{Target: target, Files: files}
}

// gen is a generated file with a header, stamped as Compile would.
func gen(p, body string) File {
	out := Output{Files: []File{{Path: p, Data: []byte(body), Mode: 0o644, Header: HashHeader}}}
	Stamp(&out, "profiles/x/ir.yml")
	return out.Files[0]
}

// verbatim is a copied file without a header.
func verbatim(p, body string, mode fs.FileMode) File {
	return File{Path: p, Data: []byte(body), Mode: mode}
}

// node is one entry of a directory tree as snapshot records it.
type node struct {
	mode fs.FileMode
	data string // file bytes, or a link's target
}

// snapshot records every entry below root, without following links, so a test can tell whether
// anything at all changed.
func snapshot(t testing.TB, root string) map[string]node {
	t.Helper()
	tree := map[string]node{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		n := node{mode: fi.Mode()}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			n.data, err = os.Readlink(p)
		case fi.Mode().IsRegular():
			var b []byte
			b, err = os.ReadFile(p)
			n.data = string(b)
		}
		tree[filepath.ToSlash(rel)] = n
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// sameTree fails the test with the first difference between two snapshots.
func sameTree(t testing.TB, before, after map[string]node) {
	t.Helper()
	for p, b := range before {
		a, ok := after[p]
		switch {
		case !ok:
			t.Errorf("%s: removed", p)
		case a != b:
			t.Errorf("%s: changed from %v %q to %v %q", p, b.mode, b.data, a.mode, a.data)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: added", p)
		}
	}
}

// writeFile puts a file under dir, creating its parents.
func writeFile(t testing.TB, dir, p, data string, mode fs.FileMode) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(full, mode); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, dir, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(dir, p string) bool {
	_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
	return err == nil
}

// mustWrite runs Write and fails the test on any error.
func mustWrite(t testing.TB, dir string, out *Output, opts WriteOptions) Plan {
	t.Helper()
	plan, err := Write(dir, out, opts)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	return plan
}

// conflicts runs Write expecting a *ConflictError and returns its conflicts.
func conflicts(t testing.TB, dir string, out *Output, opts WriteOptions) []Conflict {
	t.Helper()
	_, err := Write(dir, out, opts)
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("Write: got error %v, want a *ConflictError", err)
	}
	return ce.Conflicts
}

// planString renders a plan as "op path" lines, to compare with a literal.
func planString(p Plan) string {
	var b strings.Builder
	for _, c := range p {
		b.WriteString(c.Op.String() + " " + c.Path + "\n")
	}
	return b.String()
}

// ledgerPaths lists the paths the target's ledger in dir records, sorted.
func ledgerPaths(t testing.TB, dir, target string) []string {
	t.Helper()
	data := readFile(t, dir, ledgerPath(target))
	l, err := decodeLedger([]byte(data), target)
	if err != nil {
		t.Fatal(err)
	}
	var ps []string
	for p := range l.Files {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}
