package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
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

// TestMakeBuildIsTheReleaseBuild: `make build` sets the environment and flags the releases are
// built with (.goreleaser.yaml): CGO_ENABLED=0, a static binary that starts without the dynamic
// loader (every autonomy process, two per launch, would pay for it), and -trimpath.
func TestMakeBuildIsTheReleaseBuild(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(makefile), "\nbuild:")
	if !ok {
		t.Fatal("the Makefile has no build target")
	}
	_, recipe, _ := strings.Cut(rest, "\n\t")
	recipe, _, _ = strings.Cut(recipe, "\n")
	raw, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var release struct {
		Builds []struct {
			Env   []string `yaml:"env"`
			Flags []string `yaml:"flags"`
		} `yaml:"builds"`
	}
	if err := yaml.Unmarshal(raw, &release); err != nil || len(release.Builds) != 1 {
		t.Fatalf(".goreleaser.yaml: %v, %d builds", err, len(release.Builds))
	}
	words := strings.Fields(recipe)
	for _, w := range append(release.Builds[0].Env, release.Builds[0].Flags...) {
		if !slices.Contains(words, w) {
			t.Errorf("make build (%s) does not set %s, which the releases are built with", recipe, w)
		}
	}
}
