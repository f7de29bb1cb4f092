package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/ir"
)

// catalogNames are the four catalogs, in the order the standard lists them.
var catalogNames = []string{"capabilities", "sources", "states", "fields"}

func newCatalog() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "catalog [capabilities|sources|states|fields]",
		Short: "Print the standard's catalogs: capabilities, param sources, lifecycle states, actor fields",
		Long: `catalog prints the four vocabularies a profile may use: capabilities (an actor's authority),
trigger-param sources (what a trigger forwards), task lifecycle states (what the orchestrator reads
off a work item) and actor fields. With no argument it prints all four.`,
		Example: `  autonomy catalog
  autonomy catalog capabilities
  autonomy catalog --format json`,
		Args:      cobra.MatchAll(cobra.MaximumNArgs(1), cobra.OnlyValidArgs),
		ValidArgs: catalogNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			which := catalogNames
			if len(args) == 1 {
				which = args
			}
			all := map[string]any{
				"capabilities": ir.Capabilities,
				"sources":      ir.Sources,
				"states":       ir.States,
				"fields":       ir.Fields,
			}
			out := cmd.OutOrStdout()
			if format == "json" {
				// Written key by key so the catalogs keep the standard's order.
				var b strings.Builder
				b.WriteString("{")
				for i, name := range which {
					entries, err := json.MarshalIndent(all[name], "  ", "  ")
					if err != nil {
						return usageError("%v", err)
					}
					if i > 0 {
						b.WriteString(",")
					}
					fmt.Fprintf(&b, "\n  %q: %s", name, entries)
				}
				b.WriteString("\n}\n")
				_, err := io.WriteString(out, b.String())
				return err
			}
			for i, name := range which {
				if i > 0 {
					fmt.Fprintln(out)
				}
				printCatalog(out, name)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}

func printCatalog(w io.Writer, name string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	defer tw.Flush()
	switch name {
	case "capabilities":
		fmt.Fprintf(tw, "CAPABILITY\tNOUN\tMEANING\n")
		for _, c := range ir.Capabilities {
			desc := c.Description
			if !c.Grantable {
				desc += " [never grantable]"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, c.Noun, desc)
		}
	case "sources":
		fmt.Fprintf(tw, "SOURCE\tMEANING\n")
		for _, s := range ir.Sources {
			fmt.Fprintf(tw, "%s\t%s\n", s.Name, s.Description)
		}
	case "states":
		fmt.Fprintf(tw, "STATE\tMEANING\n")
		for _, s := range ir.States {
			fmt.Fprintf(tw, "%s\t%s\n", s.Name, s.Description)
		}
	case "fields":
		fmt.Fprintf(tw, "FIELD\tORIGIN\tMEANING\n")
		for _, f := range ir.Fields {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Name, f.Origin, f.Description)
		}
	}
}
