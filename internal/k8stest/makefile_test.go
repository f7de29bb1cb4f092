package k8stest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeK8sTestRunsEveryUser: every package whose tests use this harness is in the Makefile's
// K8S_PKGS, which make k8s-test (and so CI) runs under the gate: outside it they skip, so a
// package left out would never run its cluster tests anywhere.
func TestMakeK8sTestRunsEveryUser(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for _, line := range strings.Split(string(makefile), "\n") {
		if v, ok := strings.CutPrefix(line, "K8S_PKGS ?="); ok {
			pkgs = strings.Fields(v)
		}
	}
	if len(pkgs) == 0 {
		t.Fatal("the Makefile sets no K8S_PKGS")
	}
	covered := func(dir string) bool {
		for _, p := range pkgs {
			p = strings.TrimPrefix(p, "./")
			if tree, ok := strings.CutSuffix(p, "/..."); ok && (dir == tree || strings.HasPrefix(dir, tree+"/")) || dir == p {
				return true
			}
		}
		return false
	}
	users := 0
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "golden") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !strings.Contains(string(src), `"github.com/autonomyhq/autonomy/internal/k8stest"`) {
			return nil
		}
		users++
		rel, _ := filepath.Rel("../..", filepath.Dir(path))
		if !covered(filepath.ToSlash(rel)) {
			t.Errorf("%s uses internal/k8stest but make k8s-test does not run it: add ./%s to K8S_PKGS in the Makefile", path, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if users == 0 {
		t.Fatal("no package uses internal/k8stest")
	}
}
