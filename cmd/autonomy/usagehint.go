package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

// usageHint is what to add to cobra's own account of a command line it refused (err, for cmd,
// run as args): the flag meant by an unknown one, or for a wrong number of arguments the
// command's usage and, when one of them names a target, the --target flag that takes it. "" when
// there is nothing to add.
func usageHint(cmd *cobra.Command, args []string, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		if near := ir.Nearest(name, names); near != "" {
			return fmt.Sprintf("did you mean --%s?", near)
		}
		return ""
	}
	if !strings.Contains(msg, "arg(s)") {
		return ""
	}
	hint := "usage: " + cmd.UseLine()
	if cmd.Flags().Lookup("target") != nil {
		for _, a := range args {
			if s, ok := registry.Lookup(a); ok && !strings.HasPrefix(a, "-") {
				hint += fmt.Sprintf(" (a target is named with a flag: --target %s)", s.Name())
				break
			}
		}
	}
	return hint
}
