package overlay_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/playbook/internal/casetest"
	"github.com/autonomyhq/autonomy/playbook/overlay"
)

// TestPackages checks testdata/packages/CASE/ as a package: its exact diagnostics in CASE.out.
func TestPackages(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/packages/*")
	for _, dir := range dirs {
		if filepath.Ext(dir) == ".out" {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if filepath.Base(dir) == "good" {
				// The good package's index is generated here, so the case pins Index's output.
				pkg, _, err := playbook.LoadPackage(dir)
				if err != nil {
					t.Fatal(err)
				}
				casetest.Compare(t, filepath.Join(dir, overlay.IndexFile), string(overlay.Index(pkg.Overlays)))
			}
			pkg, loadDiags, err := playbook.LoadPackage(dir)
			if err != nil {
				t.Fatal(err)
			}
			diags := append(loadDiags, overlay.ValidatePackage(pkg)...).Sort()
			casetest.Compare(t, dir+".out", diags.String())
		})
	}
}

// TestIndexDeterministic: the index does not depend on the order overlays are given in.
func TestIndexDeterministic(t *testing.T) {
	pkg, _, err := playbook.LoadPackage("testdata/packages/good")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkg.Overlays) != 2 {
		t.Fatalf("%d overlays", len(pkg.Overlays))
	}
	a := overlay.Index(pkg.Overlays)
	b := overlay.Index([]*overlay.Overlay{pkg.Overlays[1], pkg.Overlays[0]})
	if !bytes.Equal(a, b) {
		t.Fatalf("order changes the index:\n%s\n%s", a, b)
	}
}
