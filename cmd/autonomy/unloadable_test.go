package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unloadableProfiles are files that do not load as a profile at all (Load returns no profile):
// compile and check must print the diagnostic and exit 1, never panic.
var unloadableProfiles = []struct {
	name, src, want string
}{
	{"unterminated flow", "schema: autonomy.ir.v1\nactors: [\n", "x.yml:2:1: "},
	{"empty", "", "x.yml:1:1: "},
	{"comment only", "# nothing here\n# at all\n", "x.yml:1:1: "},
	{"multi-document", "schema: autonomy.ir.v1\n---\nschema: autonomy.ir.v1\n", "x.yml:2:1: "},
	{"control character", "schema: autonomy.ir.v1\nactors:\x01 {}\n", "x.yml:2:"},
	{"tab indentation", "schema: autonomy.ir.v1\nactors:\n\tdev:\n\t\tbehavior: x\n", "x.yml:3:"},
	{"nesting deeper than 10,000", "schema: autonomy.ir.v1\nx-deep: " + strings.Repeat("[", 10_001) + strings.Repeat("]", 10_001) + "\n", "x.yml:"},
}

func TestCompileAndCheckUnloadableProfile(t *testing.T) {
	for _, c := range unloadableProfiles {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "x.yml")
			if err := os.WriteFile(file, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			for _, args := range [][]string{
				{"compile", file, "--target", "local", "--out", out},
				{"compile", file, "--target", "gh-actions", "--out", out, "--dry-run"},
				{"check", file, "--target", "local", "--dir", out},
			} {
				verb := map[string]string{"compile": "compiled", "check": "checked"}[args[0]]
				code, stdout, stderr := run(t, args...)
				if code != 1 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "; nothing was "+verb+"\n") || strings.Contains(stderr, "panic") {
					t.Errorf("%v: exit %d, want 1, the diagnostic %q and \"nothing was %s\"\nstdout: %s\nstderr: %s", args, code, c.want, verb, stdout, stderr)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("an unloadable profile created %s", out)
			}
		})
	}
}
