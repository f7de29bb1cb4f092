package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/playbook/capsule"
)

func newPlaybookChecks() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "checks [--format text|json]",
		Short: "List the 21 capsule playbook checks and how each is carried out",
		Long: `checks lists the validation checks of capsule playbooks (seed 000) by number, with the seed's
tag and wording, and how validate carries each out: as an error ([enforced] checks), as a warning
(an [honor-system] check a rule approximates), or not checked (an [honor-system] check no rule
can decide), with the rule used.`,
		Example: `  autonomy playbook checks
  autonomy playbook checks --format json | jq '.[] | select(.as == "not checked")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if format == "json" {
				type check struct {
					Number  int    `json:"number"`
					Tag     string `json:"tag"`
					Wording string `json:"wording"`
					As      string `json:"as"`
					How     string `json:"how,omitempty"`
				}
				list := make([]check, len(capsule.Checks))
				for i, c := range capsule.Checks {
					list[i] = check{c.Number, c.Tag, c.Wording, c.As, c.How}
				}
				return writeJSON(out, list)
			}
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			for _, c := range capsule.Checks {
				fmt.Fprintf(w, "%d\t%s\t%s\n", c.Number, c.As, c.Wording)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}
