package main

import (
	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/ir"
)

func newSchema() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print a JSON Schema of the profile format, for editors",
		Long: `schema prints a JSON Schema (draft-07) of autonomy.ir.v1 profiles, generated from the catalogs.
Editors with yaml-language-server (VS Code's YAML extension, Neovim, Helix) complete and check a
profile with it when the profile's first line names it:

  # yaml-language-server: $schema=path/to/ir.schema.json

The schema cannot express every rule (paths, the merge boundary, reviewers): autonomy validate
stays the authority.`,
		Example: `  autonomy schema > docs/ir.schema.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(ir.JSONSchema())
			return err
		},
	}
}
