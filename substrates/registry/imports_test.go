package registry

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/autonomyhq/autonomy/"

// substrateOf returns the substrate package tree an import path is in ("substrates/local" for
// substrates/local/gitws), or "" for a path outside every substrate's own package.
func substrateOf(path string) string {
	rest, ok := strings.CutPrefix(path, module+"substrates/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	if name == "registry" {
		return ""
	}
	return "substrates/" + name
}

// TestOnlyTheRegistryImportsSubstrates: a substrate's packages are imported by that substrate
// and the registry only: cmd/autonomy, conformance, ir, playbook and internal never import one,
// so adding a substrate touches no other package.
func TestOnlyTheRegistryImportsSubstrates(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "golden" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(must(filepath.Rel(root, path))))
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			sub := substrateOf(p)
			rel := strings.TrimPrefix(p, module)
			switch {
			case sub == "", dir == "substrates/registry", dir == sub || strings.HasPrefix(dir, sub+"/"):
			default:
				t.Errorf("%s imports %s: only %s itself and substrates/registry may (dispatch through the registry and the substrates' optional interfaces)", path, rel, sub)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}
