package engine

import (
	"fmt"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/playbook/workflow"
)

// CheckCLI refuses, at its command, each cli step or postcondition whose program policy.box.cli
// refuses (pol). A program written as a reference ($args.tool) is checked when the step runs.
func CheckCLI(w *workflow.Workflow, pol *resolved.CLIPolicy) ir.Diagnostics {
	if w == nil || pol == nil {
		return nil
	}
	var d ir.Diagnostics
	for _, s := range w.Steps {
		for _, c := range []*workflow.Step{s, s.PostconditionStep()} {
			if c == nil || c.Namespace != "cli" && c.Namespace != "node" {
				continue
			}
			words, err := Words(c.Rest)
			if err != nil || len(words) == 0 || strings.Contains(words[0], "$") && c.Namespace == "cli" {
				continue
			}
			program := words[0]
			if c.Namespace == "node" {
				program = "node" // a node step runs Node
			}
			if why, fix := pol.Refuses(program); why != "" {
				what := fmt.Sprintf("step %q", s.ID.Value)
				if c != s {
					what += ": postcondition"
				}
				d = append(d, ir.Diagnostic{File: w.File, Pos: c.Command.Pos, Severity: ir.Error, Message: what + ": " + why, Hint: fix})
			}
		}
	}
	return d
}
