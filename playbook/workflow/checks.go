package workflow

import (
	"github.com/autonomyhq/autonomy/ir"
)

// PostconditionNamespaces are the namespaces a postcondition may use.
var PostconditionNamespaces = []string{"cli", "http"}

// checks validates a step's explicit output schema (it compiles, self-contained; the step prints
// JSON) and its postcondition (a cli or http command that splits and parses as a step's does,
// reading steps up to this one).
func (v *validator) checks(i int, who string, s *Step) {
	if s.Schema != nil {
		if _, err := ir.CompileResultSchema(&ir.Result{Inline: s.Schema}); err != nil {
			v.r.Errorf(s.SchemaPos, "write a self-contained JSON Schema, e.g. schema: { type: object, required: [id] }", "%s: the schema does not compile: %v", who, err)
		}
		if s.Output.Value == "text" {
			v.r.Errorf(s.Output.Pos, "write output: json, or remove schema", "%s: a step with a schema prints JSON, and this one declares output: text", who)
		}
	}
	pc := s.PostconditionStep()
	if pc == nil {
		if s.Postcondition.Pos.IsSet() {
			v.r.Errorf(s.Postcondition.Pos, "e.g. postcondition: cli test -f out/report.json", "%s: the postcondition is empty", who)
		}
		return
	}
	what := who + ": postcondition"
	switch {
	case !contains(PostconditionNamespaces, pc.Namespace):
		v.r.Errorf(s.Postcondition.Pos, "start it with cli or http, e.g. postcondition: cli test -f out/report.json", "%s: namespace %q is not one a postcondition runs (cli, http)", what, pc.Namespace)
		return
	case pc.Rest == "":
		v.r.Errorf(s.Postcondition.Pos, "e.g. postcondition: cli test -f out/report.json", "%s: the %s command names nothing to run", what, pc.Namespace)
		return
	}
	v.words(what, pc)
	v.self = true // the step's own output included
	v.refs(i, what, s.Postcondition)
	v.self = false
}
