package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook"
)

// playbookReport is one file's result in --format json.
type playbookReport struct {
	File        string          `json:"file"`
	Format      playbook.Format `json:"format"`
	Valid       bool            `json:"valid"`
	Errors      int             `json:"errors"`
	Warnings    int             `json:"warnings"`
	Diagnostics ir.Diagnostics  `json:"diagnostics"`
}

func newPlaybookValidate() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "validate FILE|DIR...",
		Short: "Check playbooks of the four formats and report every problem",
		Long: `validate detects the format of each file (capsule, overlay, steps, workflow) and checks it,
reporting every problem at once, one per line, sorted:

  path:line:col: message (how to fix it)

A directory is walked: the files that are recognizably playbooks are checked (hidden folders and
symbolic links are skipped). Its capsule playbooks are checked together as a library (one active
playbook per trigger and scope, supersession and composition pairs); a folder holding _index.md
is an overlay package, and its index must list every overlay exactly as 'playbook index' writes it.

Exit codes: 0 no errors (warnings allowed), 1 errors found, 2 usage or I/O error.`,
		Example: `  autonomy playbook validate profiles/librarian/playbooks/
  autonomy playbook validate profiles/librarian/humans/collection-review.playbook.md profiles/librarian/playbooks/skill/inline-citations.md
  autonomy playbook validate --format json profiles/librarian/playbooks/ | jq '.playbooks[] | select(.valid | not)'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			res := playbook.ValidatePaths(args)
			reports := make([]playbookReport, 0, len(res.Files))
			index := map[string]int{}
			for _, f := range res.Files {
				index[f.Path] = len(reports)
				reports = append(reports, playbookReport{File: f.Path, Format: f.Format, Valid: true, Diagnostics: ir.Diagnostics{}})
			}
			for _, d := range res.Diagnostics {
				i, ok := index[d.File]
				if !ok {
					index[d.File] = len(reports)
					i = len(reports)
					reports = append(reports, playbookReport{File: d.File, Valid: true, Diagnostics: ir.Diagnostics{}})
				}
				r := &reports[i]
				r.Diagnostics = append(r.Diagnostics, d)
				if d.Severity == ir.Error {
					r.Errors++
					r.Valid = false
				} else {
					r.Warnings++
				}
			}
			code := exitOK
			if res.Diagnostics.HasErrors() {
				code = exitProblems
			}
			if len(res.Failures) > 0 {
				code = exitUsage
			}
			if format == "json" {
				failures := res.Failures
				if failures == nil {
					failures = []playbook.Failure{}
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(struct {
					Playbooks []playbookReport   `json:"playbooks"`
					Failures  []playbook.Failure `json:"failures"`
				}{reports, failures}); err != nil {
					return usageError("%v", err)
				}
			} else {
				fmt.Fprint(out, res.Diagnostics.String())
				for _, f := range res.Failures {
					fmt.Fprintf(errOut, "autonomy: %s: %s\n", f.Path, f.Error)
				}
				valid := 0
				for _, r := range reports {
					if r.Valid {
						valid++
					}
				}
				errs := res.Diagnostics.Errors()
				line := fmt.Sprintf("%d of %d %s valid (%s, %s", valid, len(reports), plural(len(reports), "playbook file", "playbook files"),
					count(errs, "error"), count(len(res.Diagnostics)-errs, "warning"))
				if n := len(res.Failures); n > 0 {
					line += fmt.Sprintf(", %d unreadable", n)
				}
				fmt.Fprintln(errOut, line+")")
			}
			if code != exitOK {
				return &exitError{Code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}
