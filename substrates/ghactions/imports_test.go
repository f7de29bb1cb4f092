package ghactions

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCompilerCallsNoGitHubAPI: the compiler's files import no GitHub API client (go-github);
// the runtime that calls GitHub is package ghrun, and the names both sides agree on are package
// wire, which imports nothing.
func TestCompilerCallsNoGitHubAPI(t *testing.T) {
	for dir, banned := range map[string]string{".": "github.com/google/go-github/", "wire": ""} {
		why := "the GitHub API belongs to package ghrun"
		if banned == "" {
			why = "package wire imports nothing"
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no Go files in %s", dir)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if strings.HasPrefix(path, banned) {
					t.Errorf("%s imports %s: %s", name, path, why)
				}
			}
		}
	}
}
