package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestTargetAndDirFlags: --target names the substrate and --dir the installation in every
// command; --substrate and compile's --out, their older names, still work and are hidden.
func TestTargetAndDirFlags(t *testing.T) {
	files := func(dir string) []string {
		t.Helper()
		var out []string
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				out = append(out, rel)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b := t.TempDir(), t.TempDir()
	if code, _, errOut := run(t, "compile", "../../profiles/hello", "--target", "local", "--dir", a); code != 0 {
		t.Fatalf("compile --target --dir: exit %d: %s", code, errOut)
	}
	if code, _, errOut := run(t, "compile", "../../profiles/hello", "--substrate", "local", "--out", b); code != 0 {
		t.Fatalf("compile --substrate --out: exit %d: %s", code, errOut)
	}
	if fa, fb := files(a), files(b); len(fa) == 0 || !reflect.DeepEqual(fa, fb) {
		t.Errorf("--target/--dir installed %v, --substrate/--out %v", fa, fb)
	}
	for _, args := range [][]string{
		{"check", "../../profiles/hello", "--target", "local", "--dir", a},
		{"check", "../../profiles/hello", "--substrate", "local", "--dir", b},
		{"runner", "--target", "local", "--dir", a, "list"},
		{"runner", "--substrate", "local", "--dir", b, "list"},
	} {
		if code, _, errOut := run(t, args...); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
	for _, cmd := range [][]string{{"compile", "--help"}, {"check", "--help"}, {"runner", "list", "--help"}, {"conformance", "--help"}} {
		_, out, _ := run(t, cmd...)
		if !strings.Contains(out, "--target string") || strings.Contains(out, "--substrate string") || strings.Contains(out, "--out string") {
			t.Errorf("%v: the help shows --substrate or --out, or no --target:\n%s", cmd, out)
		}
	}
}
