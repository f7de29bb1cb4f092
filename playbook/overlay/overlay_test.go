package overlay

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/casetest"
)

func check(t *testing.T, file string) ir.Diagnostics {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, diags := Check(file, data)
	return diags
}

func TestCases(t *testing.T) { casetest.Run(t, "testdata", check, ".md") }

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
				pkg, err := Load(dir)
				if err != nil {
					t.Fatal(err)
				}
				casetest.Compare(t, filepath.Join(dir, IndexFile), string(Index(pkg.Overlays, dir)))
			}
			pkg, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			diags := append(pkg.Diags, ValidatePackage(pkg)...).Sort()
			casetest.Compare(t, dir+".out", diags.String())
		})
	}
}

// TestIndexDeterministic: the index does not depend on the order overlays are given in.
func TestIndexDeterministic(t *testing.T) {
	pkg, err := Load("testdata/packages/good")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkg.Overlays) != 2 {
		t.Fatalf("%d overlays", len(pkg.Overlays))
	}
	a := Index(pkg.Overlays, "x")
	b := Index([]*Overlay{pkg.Overlays[1], pkg.Overlays[0]}, "x")
	if !bytes.Equal(a, b) {
		t.Fatalf("order changes the index:\n%s\n%s", a, b)
	}
}

func TestParseStructure(t *testing.T) {
	data, _ := os.ReadFile("testdata/good/flag-contradictions.md")
	o, diags := Check("x.md", data)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	if o.Priority.Value != 70 || len(o.Targets) != 2 || o.Targets[1].Pattern() != "operator/*" || o.Targets[0].Pattern() != "role/librarian" {
		t.Errorf("%+v", o)
	}
	if o.Body[:2] != "# " || o.BodyPos != (ir.Pos{Line: 26, Col: 1}) || o.TTL.Value != "P30D" || o.UpdatedAt.Value != "2026-06-01T12:00:00Z" {
		t.Errorf("body at %v ttl %q updated %q", o.BodyPos, o.TTL.Value, o.UpdatedAt.Value)
	}
	data, _ = os.ReadFile("testdata/good/tone-block.md")
	o, _ = Check("y.md", data)
	if o.Priority.Value != DefaultPriority || o.Priority.Pos.IsSet() || o.Block.Value != "tone" {
		t.Errorf("%+v", o)
	}
}
