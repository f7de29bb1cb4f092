package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/autonomyhq/autonomy/internal/strictjson"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/workflow"
)

// specPostcondition is a compiled step's postcondition as a step (s's id, cwd, env and
// timeout), nil when it has none.
func specPostcondition(spec StepSpec, s *workflow.Step) *workflow.Step {
	if spec.Postcondition == nil {
		return nil
	}
	words := make([]string, len(spec.Postcondition.Argv))
	for i, a := range spec.Postcondition.Argv {
		words[i] = quoteWord(a)
	}
	command := spec.Postcondition.Namespace + " " + strings.Join(spec.Postcondition.Argv, " ")
	return &workflow.Step{ID: s.ID, Command: ir.String{Value: command}, Namespace: spec.Postcondition.Namespace,
		Rest: strings.Join(words, " "), Cwd: s.Cwd, Env: s.Env, TimeoutMs: s.TimeoutMs}
}

// verify checks a step that ran (seed 003): its output against its explicit schema (schema,
// nil: none), naming each failing field, then its postcondition (pc, nil: none), a command run
// in the step's cwd with its env and limits while the step's own record is readable. Either
// failing fails the step.
func (x *exec) verify(ctx context.Context, schema any, pc *workflow.Step, rec *record) error {
	if schema != nil {
		if rec.JSON == nil {
			j, err := jsonOutput([]byte(rec.Stdout))
			if err != nil {
				return fmt.Errorf("the step declares a schema: %v", err)
			}
			rec.JSON = j
		}
		sch, err := ir.CompileResultSchema(&ir.Result{Inline: schema})
		if err != nil {
			return fmt.Errorf("the step's schema does not compile: %v", err)
		}
		doc, err := strictjson.Decode(rec.JSON) // what a later step reads is what was validated
		if err != nil {
			return fmt.Errorf("the step's output: %v", err)
		}
		if err := sch.Validate(doc); err != nil {
			return fmt.Errorf("the output does not satisfy the step's schema: %s", ir.ExplainResultError(err))
		}
	}
	if pc == nil {
		return nil
	}
	n := len(x.st.Results)
	x.st.Results = append(x.st.Results, *rec) // the postcondition may read the step's own output
	defer func() { x.st.Results = x.st.Results[:n] }()
	var got record
	if err := x.step(ctx, pc, &got); err != nil {
		return fmt.Errorf("postcondition %q failed: %v", pc.Command.Value, err)
	}
	return nil
}
