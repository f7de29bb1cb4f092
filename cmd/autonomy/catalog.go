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

// catalogNames are the four catalogs, in the order the standard lists them, then the targets
// this build registers (the values of targets:).
var catalogNames = []string{"capabilities", "sources", "states", "fields", "targets"}

// catalogTarget is a registered target as catalog prints it.
type catalogTarget struct {
	Name string `json:"name"`
	// Short are its plain other names (accepted without a warning).
	Short []string `json:"short,omitempty"`
	// Aliases are its deprecated spellings (accepted with a warning).
	Aliases []string `json:"aliases,omitempty"`
	// Box are the policy.box keys it owns.
	Box []string `json:"box"`
}

func catalogTargets() []catalogTarget {
	var out []catalogTarget
	for _, t := range ir.RegisteredTargets() {
		out = append(out, catalogTarget{Name: t.Name, Short: t.Short, Aliases: t.Aliases,
			Box: append(append([]string{t.Name}, t.Short...), t.Aliases...)})
	}
	return out
}

func newCatalog() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "catalog [capabilities|sources|states|fields|targets]",
		Short: "Print the standard's catalogs: capabilities, param sources, lifecycle states, actor fields; and the targets",
		Long: `catalog prints the four vocabularies a profile may use: capabilities (an actor's authority),
trigger-param sources (what a trigger forwards), task lifecycle states (what the orchestrator reads
off a work item) and actor fields; then the targets this build compiles to (the values of
targets:, with their short names, their deprecated aliases and the policy.box keys each owns). With no argument it
prints all five.`,
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
				"targets":      catalogTargets(),
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
	case "targets":
		fmt.Fprintf(tw, "TARGET\tSHORT\tDEPRECATED ALIASES\tPOLICY.BOX\n")
		for _, t := range catalogTargets() {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, strings.Join(t.Short, ", "), strings.Join(t.Aliases, ", "), strings.Join(t.Box, ", "))
		}
	}
}
