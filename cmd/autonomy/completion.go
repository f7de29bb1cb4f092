package main

import (
	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/templates"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

// addCompletions makes the shell completion (autonomy completion bash|zsh|fish|powershell)
// complete values, not only command names: the targets of every --target and init's templates.
// The runner's verbs complete actors and session ids themselves (localcmd).
func addCompletions(root *cobra.Command) {
	targets := func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return registry.Names(), cobra.ShellCompDirectiveNoFileComp
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, name := range []string{"target", "substrate"} {
			// The flags c declares (LocalFlags would say the same, but merges every parent's
			// persistent flags into a new set per command, half of building the tree).
			if c.Flags().Lookup(name) != nil || c.PersistentFlags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, targets) // once per flag: a repeat is refused, harmlessly
			}
		}
		if c.Name() == "init" && c.Parent() == root {
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
