// Package sariftest validates SARIF logs against the official SARIF 2.1.0 JSON schema (OASIS,
// committed under testdata with its source and license), offline, for tests of the programs
// that write them.
package sariftest

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed testdata/sarif-schema-2.1.0.json
var schemaJSON []byte

// SchemaID is the URI the official SARIF 2.1.0 schema names itself by.
const SchemaID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, err
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
		return fmt.Errorf("the SARIF schema does not compile: %w", err)
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
