package localcmd

import (
	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/substrates/local"
)

// completeRunner makes the shell completion of the runner's verbs complete their first
// argument: the installed actors for launch, the session ids (most recent first, with actor and
// status) for get, update, cancel and logs, of the installation --dir names.
func completeRunner(runner *cobra.Command, f *runnerFlags) {
	for _, c := range runner.Commands() {
		switch c.Name() {
		case "launch":
			c.ValidArgsFunction = firstArg(func(_ *cobra.Command, prefix string) []string { return local.CompleteActors(f.dir, prefix) })
		case "get", "update", "cancel", "logs":
			c.ValidArgsFunction = firstArg(func(c *cobra.Command, prefix string) []string {
				return local.CompleteSessions(c.Context(), f.dir, prefix)
			})
		}
	}
}

// firstArg completes the first positional argument with list, and nothing after it.
func firstArg(list func(c *cobra.Command, prefix string) []string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return list(c, prefix), cobra.ShellCompDirectiveNoFileComp
	}
}
