package main

import (
	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/templates"
	"github.com/autonomyhq/autonomy/substrates/local"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

// addCompletions makes the shell completion (autonomy completion bash|zsh|fish|powershell)
// complete values, not only command names: the targets of every --target, init's templates, and
// for the runner the installed actors (launch) and the session ids (get, update, cancel, logs) of
// the installation its --dir names.
func addCompletions(root *cobra.Command) {
	targets := func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return registry.Names(), cobra.ShellCompDirectiveNoFileComp
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, name := range []string{"target", "substrate"} {
			if c.LocalFlags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, targets) // once per flag: a repeat is refused, harmlessly
			}
		}
		switch c.CommandPath() {
		case "autonomy runner launch":
			c.ValidArgsFunction = firstArg(func(c *cobra.Command, prefix string) []string {
				return local.CompleteActors(runnerDir(c), prefix)
			})
		case "autonomy runner get", "autonomy runner update", "autonomy runner cancel", "autonomy runner logs":
			c.ValidArgsFunction = firstArg(func(c *cobra.Command, prefix string) []string {
				return local.CompleteSessions(c.Context(), runnerDir(c), prefix)
			})
		case "autonomy init":
			_ = c.RegisterFlagCompletionFunc("template", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return templates.Names(), cobra.ShellCompDirectiveNoFileComp
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	completionExamples(root)
}

// completionExamples gives cobra's completion commands the examples every command has.
func completionExamples(root *cobra.Command) {
	files := map[string]string{"bash": "autonomy.bash", "zsh": "_autonomy", "fish": "autonomy.fish", "powershell": "autonomy.ps1"}
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Example = "  autonomy completion bash > autonomy.bash\n  autonomy completion zsh > _autonomy"
		for _, sh := range c.Commands() {
			if f, ok := files[sh.Name()]; ok {
				sh.Example = "  autonomy completion " + sh.Name() + " > " + f
			}
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

// runnerDir is the installation a runner verb's --dir names (its default when not given).
func runnerDir(c *cobra.Command) string {
	if f := c.Flags().Lookup("dir"); f != nil {
		return f.Value.String()
	}
	return "."
}
