package main

import (
	"fmt"
	"io"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// compileReport is compile's result in --format json.
type compileReport struct {
	Target    string                `json:"target"`
	Dir       string                `json:"dir"`
	DryRun    bool                  `json:"dryRun"`
	Plan      substrates.Plan       `json:"plan"`
	Conflicts []substrates.Conflict `json:"conflicts,omitempty"`
	Warnings  ir.Diagnostics        `json:"warnings"`
	// Failure says why nothing was written.
	Failure string `json:"failure,omitempty"`

	format string
}

// emit prints the plan: text lists it (printPlan), json writes the report; the summary line is
// on stderr in both.
func (r *compileReport) emit(out, errOut io.Writer, plan substrates.Plan) error {
	if r.format != "json" {
		printPlan(out, errOut, plan, r.Target, r.Dir, r.DryRun)
		return nil
	}
	r.Plan = plan
	if r.Plan == nil {
		r.Plan = substrates.Plan{}
	}
	if err := r.write(out); err != nil {
		return err
	}
	printPlan(io.Discard, errOut, plan, r.Target, r.Dir, r.DryRun)
	return nil
}

// refused prints the conflicts that kept the install from happening, and fails.
func (r *compileReport) refused(out, errOut io.Writer, ce *substrates.ConflictError) error {
	fmt.Fprintln(errOut, ce.Error())
	if r.format == "json" {
		r.Plan, r.Conflicts, r.Failure = substrates.Plan{}, ce.Conflicts, "nothing was written"
		if err := r.write(out); err != nil {
			return err
		}
	}
	return &exitError{Code: exitProblems, Msg: "nothing was written"}
}

func (r *compileReport) write(out io.Writer) error {
	if r.Warnings == nil {
		r.Warnings = ir.Diagnostics{}
	}
	return cliout.WriteJSON(out, r)
}
