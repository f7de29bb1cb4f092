package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/templates"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

func newInit() *cobra.Command {
	var template, target, format string
	var list bool
	cmd := &cobra.Command{
		Use:   "init [DIR] [--template NAME] [--target T]",
		Short: "Scaffold a new profile from a bundled template",
		Long: `init writes a new profile into DIR (default: autonomy, a folder of the repository the fleet
will run in) from one of the bundled example profiles, checks that it validates, and prints the
next steps for each target it declares: first, when the profile names governing documents
(documents.roles), the steps that write and commit them. --list lists the templates.

DIR must not exist or be empty: init never overwrites a file. The profile's editor schema is
written beside it (ir.schema.json, which its yaml-language-server modeline names). --target
narrows the profile to one of the template's targets.

On a terminal, without --template, init asks which template and target (Enter takes the
default). When stdin is not a terminal it asks nothing: the template is --template, else hello.

Exit codes: 0 written, 1 the written profile does not validate (a bug: report it), 2 usage or
I/O error (an unknown template, a DIR that is not empty).`,
		Example: `  autonomy init --list
  autonomy init --template hello
  autonomy init fleet --template sdlc --target gh-actions
  autonomy init --list --format json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if list {
				return printTemplates(out, format)
			}
			dir := "autonomy"
			if len(args) == 1 {
				dir = args[0]
			}
			if template == "" && cliout.IsTerminal(cmd.InOrStdin()) {
				var err error
				if template, target, err = templates.Ask(cmd.InOrStdin(), errOut); err != nil {
					return usageError("%v", err)
				}
			}
			if template == "" {
				template = templates.Default
			}
			if sub, ok := registry.Lookup(target); ok && target != "" {
				target = sub.Name() // a short name or a deprecated alias, as compile takes it
			}
			files, err := templates.Write(template, dir, templates.Options{Target: target})
			if err != nil {
				return usageError("%v", err)
			}
			for _, f := range files {
				fmt.Fprintf(out, "create %s\n", filepath.ToSlash(filepath.Join(dir, f)))
			}
			return initDone(out, errOut, dir, template)
		},
	}
	cmd.Flags().StringVar(&template, "template", "", "the bundled profile to start from (--list shows them); default hello")
	cmd.Flags().StringVar(&target, "target", "", "keep only this target of the template's")
	cmd.Flags().BoolVar(&list, "list", false, "list the templates and exit")
	cmd.Flags().StringVar(&format, "format", "text", "the format of --list: text or json")
	return cmd
}

// initDone validates what init wrote and prints the next steps per target.
func initDone(out, errOut io.Writer, dir, template string) error {
	p, diags, err := checkProfile(dir)
	if err != nil || p == nil || diags.HasErrors() {
		fmt.Fprint(errOut, diags.String())
		return &exitError{Code: exitProblems, Msg: fmt.Sprintf("the %s template wrote a profile that does not validate (%v): please report it", template, err)}
	}
	fmt.Fprintf(errOut, "init: wrote %s from the %s template; it validates\n", dir, template)
	actor := ""
	for _, a := range p.Actors {
		if !a.IsHuman() && actor == "" {
			actor = a.Name.Value
		}
	}
	if p.Documents != nil && len(p.Documents.Roles) > 0 {
		fmt.Fprintf(out, "\nFirst, the documents the agents read (compile warns while one is missing):\n")
		for _, s := range templates.DocumentSteps(p.Documents.Roles) {
			fmt.Fprintf(out, "  %s\n", s)
		}
	}
	for _, t := range p.Targets {
		fmt.Fprintf(out, "\nNext, for %s:\n", t.Value)
		for _, s := range templates.NextSteps(dir, t.Value, templates.TrialOf(template, actor)) {
			fmt.Fprintf(out, "  %s\n", s)
		}
	}
	return nil
}

// printTemplates lists the templates.
func printTemplates(out io.Writer, format string) error {
	list := templates.List()
	if format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(list); err != nil {
			return usageError("%v", err)
		}
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, t := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, strings.Join(t.Targets, ","), t.Summary)
	}
	return tw.Flush()
}
