package local

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/autonomyhq/autonomy/ir"
)

// verify decides what an exit 0 means: done when the actor declares no result schema, or when
// its result file validates against it; failed otherwise. Done is verified, never presumed.
func (in *Install) verify(cfg *ActorConfig, resultPath string) (ir.SessionStatus, string, string) {
	if cfg.Result == "" {
		return ir.Done, "", "exit status 0; the actor declares no result schema"
	}
	data, err := os.ReadFile(resultPath)
	if err != nil {
		return ir.Failed, fmt.Sprintf("exit status 0 but no result: %s was not written (the actor must write its result there, as AUTONOMY_RESULT says)", resultPath), ""
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return ir.Failed, fmt.Sprintf("exit status 0 but the result is not JSON: %v", err), ""
	}
	schemaPath := in.Path(cfg.Result)
	raw, err := os.ReadFile(schemaPath)
	if err != nil {
		return ir.Failed, fmt.Sprintf("cannot read the result schema %s: %v", cfg.Result, err), ""
	}
	var schemaDoc any
	if err := json.Unmarshal(raw, &schemaDoc); err != nil {
		return ir.Failed, fmt.Sprintf("the result schema %s is not JSON: %v (compile again)", cfg.Result, err), ""
	}
	if m, ok := schemaDoc.(map[string]any); ok {
		delete(m, "//") // the DO NOT EDIT header member
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("file:///result-schema.json", schemaDoc); err != nil {
		return ir.Failed, fmt.Sprintf("the result schema %s: %v", cfg.Result, err), ""
	}
	sch, err := c.Compile("file:///result-schema.json")
	if err != nil {
		return ir.Failed, fmt.Sprintf("the result schema %s does not compile: %v", cfg.Result, err), ""
	}
	if err := sch.Validate(doc); err != nil {
		msg := ir.ExplainResultError(err)
		return ir.Failed, fmt.Sprintf("exit status 0 but the result does not satisfy %s: %s", cfg.Result, msg), ""
	}
	return ir.Done, "", fmt.Sprintf("exit status 0 and %s validates against %s", filepath.Base(resultPath), cfg.Result)
}
