// Package sariftest validates SARIF logs against the official SARIF 2.1.0 JSON schema, offline,
// for tests of the programs that write them. The schema is not a copy of ours: it is read from
// the source of a dependency the Go module proxy serves (github.com/owenrumney/go-sarif/v3,
// public domain, whose sarif package carries the OASIS schema verbatim), in the module cache.
package sariftest

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	// The module that carries the schema: imported so that go.mod keeps it and the module cache
	// holds its source.
	_ "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
)

// SchemaID is the URI the official SARIF 2.1.0 schema names itself by.
const SchemaID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

const carrier = "github.com/owenrumney/go-sarif/v3"

// schemaText reads the schema from the carrier's source: the raw string constant `schema` of
// pkg/report/v210/sarif/schema.go.
func schemaText() ([]byte, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", carrier).Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m %s: %v", carrier, err)
	}
	file := filepath.Join(strings.TrimSpace(string(out)), "pkg", "report", "v210", "sarif", "schema.go")
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		return nil, err
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if len(v.Names) == 1 && v.Names[0].Name == "schema" && len(v.Values) == 1 {
				if lit, ok := v.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					text, err := strconv.Unquote(lit.Value)
					return []byte(text), err
				}
			}
		}
	}
	return nil, fmt.Errorf("%s: no schema constant", file)
}

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	text, err := schemaText()
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return nil, err
	}
	if m, ok := doc.(map[string]any); !ok || m["id"] != SchemaID {
		return nil, fmt.Errorf("the schema read from %s is not the OASIS SARIF 2.1.0 schema %s", carrier, SchemaID)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(SchemaID, doc); err != nil {
		return nil, err
	}
	return c.Compile(SchemaID)
})

// Validate reports whether log is a SARIF 2.1.0 log the official schema accepts (formats such
// as uri, uri-reference and date-time asserted), with the schema's reasons when it is not.
func Validate(log []byte) error {
	sch, err := compiled()
	if err != nil {
		return fmt.Errorf("the SARIF schema cannot be read: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(log))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("not a valid SARIF 2.1.0 log: %#v", err)
	}
	return nil
}
