// Package casetest runs the testdata cases of the playbook formats, in the layout of ir/testdata:
// good/ holds files that must draw no diagnostic at all, bad/ files with at least one error and
// warn/ files with warnings only; every bad and warn file NAME.EXT has NAME.out beside it holding
// the exact diagnostics, positions pinned. go test -update rewrites the .out files.
package casetest

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

var update = flag.Bool("update", false, "rewrite the expected .out files of testdata (review the diff before committing)")

// Check is the function under test: the sorted diagnostics of one file.
type Check func(t *testing.T, file string) ir.Diagnostics

// Run runs every case of dir/good, dir/bad and dir/warn whose name ends in one of exts.
func Run(t *testing.T, dir string, check Check, exts ...string) {
	for _, kind := range []string{"good", "bad", "warn"} {
		if _, err := os.Stat(filepath.Join(dir, kind)); kind == "warn" && os.IsNotExist(err) {
			continue // a format whose every problem is an error has no warn cases
		}
		files := glob(t, filepath.Join(dir, kind), exts)
		if len(files) == 0 {
			t.Fatalf("no cases in %s/%s", dir, kind)
		}
		for _, file := range files {
			t.Run(kind+"/"+filepath.Base(file), func(t *testing.T) {
				diags := check(t, file)
				switch kind {
				case "good":
					if len(diags) > 0 {
						t.Fatalf("a good case draws diagnostics:\n%s", diags)
					}
					return
				case "bad":
					if !diags.HasErrors() {
						t.Errorf("a bad case draws no error:\n%s", diags)
					}
				case "warn":
					if diags.HasErrors() || len(diags) == 0 {
						t.Errorf("a warn case must draw warnings and no error:\n%s", diags)
					}
				}
				compare(t, file, diags.String())
			})
		}
	}
}

func glob(t *testing.T, dir string, exts []string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		for _, ext := range exts {
			if strings.HasSuffix(e.Name(), ext) {
				out = append(out, filepath.Join(dir, e.Name()))
				break
			}
		}
	}
	return out
}

// compare checks got against the case's .out file (rewriting it under -update).
func compare(t *testing.T, file, got string) {
	t.Helper()
	base := filepath.Base(file)
	if i := strings.Index(base, "."); i > 0 {
		base = base[:i]
	}
	Compare(t, filepath.Join(filepath.Dir(file), base+".out"), got)
}

// Compare checks got against the expected output file (rewriting it under -update).
func Compare(t *testing.T, outFile, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(outFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatalf("missing expected output: %v", err)
	}
	if got != string(want) {
		t.Errorf("diagnostics differ\n--- got\n%s--- want\n%s", got, want)
	}
}

// Sane fails t unless every diagnostic is positioned, has a message without a bad format verb
// (unless the input itself holds "%!", which a message may quote), and the list is sorted: what a
// fuzz target asserts of any input.
func Sane(t *testing.T, input []byte, diags ir.Diagnostics) {
	t.Helper()
	for i, d := range diags {
		if d.Pos.Line < 1 || d.Pos.Col < 1 || d.Message == "" || d.File == "" {
			t.Fatalf("unpositioned or empty diagnostic: %#v", d)
		}
		if !strings.Contains(string(input), "%!") && (strings.Contains(d.Message, "%!") || strings.Contains(d.Hint, "%!")) {
			t.Fatalf("bad format verb: %s", d)
		}
		if i > 0 && diags[i-1].File > d.File {
			t.Fatalf("unsorted diagnostics: %s before %s", diags[i-1].File, d.File)
		}
		if i > 0 && diags[i-1].File == d.File {
			prev := diags[i-1].Pos
			if prev.Line > d.Pos.Line || prev.Line == d.Pos.Line && prev.Col > d.Pos.Col {
				t.Fatalf("unsorted diagnostics: %v before %v", prev, d.Pos)
			}
		}
	}
}

// Seeds adds every file of dir/*/ as a fuzz seed.
func Seeds(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	for _, file := range files {
		if strings.HasSuffix(file, ".out") {
			continue
		}
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
}

// Of adapts a format's Check(file, data) to a case check: the file is read and checked.
func Of[T any](check func(file string, data []byte) (T, ir.Diagnostics)) Check {
	return func(t *testing.T, file string) ir.Diagnostics {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		_, diags := check(file, data)
		return diags
	}
}
