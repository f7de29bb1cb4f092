package steps

import (
	"fmt"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/source"
)

// Validate reports the seed's warnings that need the whole playbook: step numbers out of sequence,
// an unknown artifact type, and a branch on a variable that is neither an input nor the output of
// an earlier step. (The seed's other warnings, a malformed input line and an invalid elicit type,
// are reported by Parse, where they are read.)
func Validate(p *Playbook) ir.Diagnostics {
	r := &source.Reporter{File: p.File}
	declared := map[string]bool{}
	values := map[string][]string{} // the values an enum input or output can take
	for _, in := range p.Inputs {
		declared[in.Name.Value] = true
		if in.Type == Enum {
			values[in.Name.Value] = in.Options
		}
	}
	for i, s := range p.Steps {
		want := 1
		if i > 0 {
			want = p.Steps[i-1].Number + 1
		}
		if s.Number != want {
			r.Warnf(s.Pos, fmt.Sprintf("number the steps 1, 2, 3…; this one should be STEP %d", want), "step numbers are not sequential: STEP %s follows %s", s.Label, previous(p.Steps, i))
		}
		for _, b := range s.Branches {
			if b.Kind != "else" && !declared[b.Var.Value] {
				r.Warnf(b.Var.Pos, fmt.Sprintf("declare it in ## INPUTS or capture it with @output(%s) in an earlier step; undeclared, it compares as empty", b.Var.Value),
					"branch variable %q is not declared", b.Var.Value)
			}
			if opts := values[b.Var.Value]; b.Kind != "else" && opts != nil && !contains(opts, b.Value) {
				r.Warnf(b.Var.Pos, ir.Suggest(b.Value, opts), "the branch compares %s with %q, which is not one of its values (%s); it is never %s",
					b.Var.Value, b.Value, strings.Join(opts, ", "), map[string]string{"==": "true", "!=": "false"}[b.Op])
			}
			for _, sub := range b.Steps {
				if sub.Number != s.Number || len(sub.Label) != len(s.Label)+1 {
					r.Warnf(sub.Pos, fmt.Sprintf("label sub-steps of STEP %d as %da, %db, …", s.Number, s.Number, s.Number), "step numbers are not sequential: sub-step %s is inside STEP %s", sub.Label, s.Label)
				}
			}
		}
		// Outputs are visible from the next step on.
		for _, o := range outputs(s) {
			declared[o] = true
		}
		for _, o := range enumOutputs(s) {
			values[o.Var.Value] = o.Options
		}
	}
	if a := p.Artifact; a != nil && !contains(ArtifactTypes, a.Value) {
		r.Warnf(a.Pos, ir.Suggest(a.Value, ArtifactTypes), "unknown artifact type %q", a.Value)
	}
	return r.Diags
}

func previous(steps []*Step, i int) string {
	if i == 0 {
		return "the start"
	}
	return "STEP " + steps[i-1].Label
}

// outputs lists the variables a step defines for the steps after it: its @output names (its own
// and its sub-steps') and, for an elicitation, __elicit_step_N.
func outputs(s *Step) []string {
	var out []string
	if s.Output != nil {
		out = append(out, s.Output.Var.Value)
	}
	if s.Elicit != nil {
		out = append(out, fmt.Sprintf("__elicit_step_%d", s.Number))
	}
	for _, b := range s.Branches {
		for _, sub := range b.Steps {
			out = append(out, outputs(sub)...)
		}
	}
	return out
}

// enumOutputs are the typed enum @outputs of s and its sub-steps.
func enumOutputs(s *Step) []*Output {
	var out []*Output
	if s.Output != nil && s.Output.Type == Enum {
		out = append(out, s.Output)
	}
	for _, b := range s.Branches {
		for _, sub := range b.Steps {
			out = append(out, enumOutputs(sub)...)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
