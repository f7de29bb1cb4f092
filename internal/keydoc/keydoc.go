// Package keydoc lets a test hold a settings reader and its documentation to the same keys: it
// reads the keys a markdown table lists in its first column, and the keys a Go reader handles as
// the string cases of its switch on a key's value.
package keydoc

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// TableKeys returns the keys of the first table after the markdown heading line heading (e.g.
// "## `policy.box.local`"): each backquoted name in a row's first cell, so that a cell listing
// "`bot_name`, `bot_email`" gives both. It fails when the heading or its table is missing.
func TableKeys(markdown []byte, heading string) ([]string, error) {
	sc := bufio.NewScanner(bytes.NewReader(markdown))
	sc.Buffer(nil, 1<<20)
	found, inTable := false, false
	var keys []string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case !found:
			found = line == heading
		case strings.HasPrefix(line, "|"):
			if !inTable { // the header row; the separator row has no backquotes
				inTable = true
				continue
			}
			cell, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
			keys = append(keys, quoted(cell)...)
		case inTable || strings.HasPrefix(line, "#"):
			if !inTable {
				return nil, fmt.Errorf("no table under %q", heading)
			}
			return keys, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !found || !inTable {
		return nil, fmt.Errorf("no table under %q", heading)
	}
	return keys, nil
}

// quoted returns the backquoted spans of s.
func quoted(s string) []string {
	parts := strings.Split(s, "`")
	var out []string
	for i := 1; i < len(parts)-1; i += 2 {
		out = append(out, parts[i])
	}
	return out
}

// SwitchKeys returns, sorted and each once, the string cases of every `switch k.Value` (or `switch k`) in the
// functions or methods named funcs of the Go package in dir (test files left out). It fails when
// one of funcs is not there, so a renamed reader is not silently skipped.
func SwitchKeys(dir string, funcs ...string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	var keys []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || !slices.Contains(funcs, fd.Name.Name) {
				continue
			}
			seen[fd.Name.Name] = true
			keys = append(keys, switchCases(fd.Body)...)
		}
	}
	for _, fn := range funcs {
		if !seen[fn] {
			return nil, fmt.Errorf("%s: no function %s", dir, fn)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys), nil
}

// switchCases returns the string cases of the switches on k.Value or k in body.
func switchCases(body *ast.BlockStmt) []string {
	var keys []string
	ast.Inspect(body, func(n ast.Node) bool {
		sw, ok := n.(*ast.SwitchStmt)
		if !ok || !isKeyValue(sw.Tag) {
			return true
		}
		for _, st := range sw.Body.List {
			for _, e := range st.(*ast.CaseClause).List {
				if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						keys = append(keys, s)
					}
				}
			}
		}
		return true
	})
	return keys
}

// isKeyValue reports whether e is k.Value (k a yaml.Node) or k (the key's string).
func isKeyValue(e ast.Expr) bool {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name == "k"
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Value" {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "k"
}

// Mentions returns the keys text names as prefix + key (e.g. prefix "policy.box.local." in
// "policy.box.local.timezone"), each once, in order of first mention: a key is the letters,
// digits and underscores that follow.
func Mentions(text, prefix string) []string {
	var keys []string
	for rest := text; ; {
		i := strings.Index(rest, prefix)
		if i < 0 {
			return keys
		}
		rest = rest[i+len(prefix):]
		end := strings.IndexFunc(rest, func(r rune) bool {
			return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		})
		if end < 0 {
			end = len(rest)
		}
		if k := rest[:end]; k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
}

// RepoMentions returns the keys README.md and docs/*.md of the repository at root name as
// prefix + key (see Mentions), each once.
func RepoMentions(root, prefix string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, f := range append(files, filepath.Join(root, "README.md")) {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, k := range Mentions(string(data), prefix) {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys, nil
}
