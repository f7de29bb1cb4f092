package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMakeFuzzListsEveryTarget: `make fuzz` runs every Fuzz function of the repository, each in
// its package, so a new fuzz target cannot be left out.
func TestMakeFuzzListsEveryTarget(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	found := 0
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../..", filepath.Dir(path))
		for _, m := range fuzzFunc.FindAllStringSubmatch(string(src), -1) {
			found++
			line := "$(GO) test ./" + filepath.ToSlash(rel) + " -run '^$$' -fuzz '^" + m[1] + "$$' -fuzztime $(FUZZTIME)"
			if !strings.Contains(string(makefile), "\t"+line+"\n") {
				t.Errorf("make fuzz does not run %s of %s; add to the Makefile:\n\t%s", m[1], rel, line)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 7 {
		t.Fatalf("found only %d fuzz targets", found)
	}
}
