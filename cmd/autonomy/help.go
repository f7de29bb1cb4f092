package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newHelp is the help command of the root and, hidden, of every command group: help [COMMAND...]
// prints the help of the command named below the group (of the group itself given none), and
// an unknown name exits 2 with the nearest names, as an unknown command does.
func newHelp(hidden bool) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long: `Help prints the help of the command named by its arguments, under the command it belongs to:
autonomy help runner launch is autonomy runner launch --help, and so is autonomy runner help launch.`,
		Hidden: hidden,
		RunE: func(c *cobra.Command, args []string) error {
			return showHelp(c.Parent(), args)
		},
		ValidArgsFunction: completeTopic,
	}
}

// completeTopic completes help's arguments with the names of the commands under those given.
func completeTopic(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	target := c.Parent()
	for _, name := range args {
		if target = subcommand(target, name); target == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
	}
	var out []cobra.Completion
	for _, sub := range target.Commands() {
		if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
			out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// showHelp prints the help of the command topic names below from, or a usage error naming the
// first word that is not a subcommand, with the nearest ones.
func showHelp(from *cobra.Command, topic []string) error {
	target := from
	for i, name := range topic {
		next := subcommand(target, name)
		if next == nil {
			msg := fmt.Sprintf("unknown help topic %q for %q", strings.Join(topic[:i+1], " "), target.CommandPath())
			if near := nearCommands(target, name); len(near) > 0 {
				msg += "\n\nDid you mean this?\n\t" + strings.Join(near, "\n\t") + "\n"
			}
			return usageError("%s\nRun '%s --help' for usage.", msg, target.CommandPath())
		}
		target = next
	}
	target.InitDefaultHelpFlag() // as --help shows it
	return target.Help()
}

// nearCommands returns the subcommands of c whose name is near name, or when none is, the
// commands further below c whose name is, by their path under c (help lauch: runner launch).
func nearCommands(c *cobra.Command, name string) []string {
	if near := c.SuggestionsFor(name); len(near) > 0 {
		return near
	}
	var out []string
	var walk func(*cobra.Command, string)
	walk = func(parent *cobra.Command, prefix string) {
		for _, sub := range parent.Commands() {
			if !sub.IsAvailableCommand() {
				continue
			}
			if parent != c && slices.Contains(parent.SuggestionsFor(name), sub.Name()) {
				out = append(out, prefix+sub.Name())
			}
			walk(sub, prefix+sub.Name()+" ")
		}
	}
	walk(c, "")
	return out
}

// subcommand returns the subcommand of c named (or aliased) name, or nil.
func subcommand(c *cobra.Command, name string) *cobra.Command {
	for _, sub := range c.Commands() {
		if sub.Name() == name || sub.HasAlias(name) {
			return sub
		}
	}
	return nil
}

// misplacedFlag returns a usage error when a switch (a flag taking no value) of a subcommand is
// given before it, as in autonomy --strict validate DIR: cobra, not knowing the flag there,
// takes the subcommand for its value and reports the next word as an unknown command. nil when
// args hold no such flag. A flag that takes a value works before the subcommand too.
func misplacedFlag(root *cobra.Command, args []string) error {
	cur := root
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if cur = subcommand(cur, a); cur == nil {
				return nil // a positional argument: the command is found
			}
			continue
		}
		if f := lookupFlag(cur, a); f != nil {
			if f.NoOptDefVal == "" && !strings.Contains(a, "=") && !shorthandJoined(a) {
				i++ // its value
			}
			continue
		}
		if i+1 == len(args) || strings.Contains(a, "=") {
			continue
		}
		next := subcommand(cur, args[i+1])
		if next == nil {
			continue
		}
		if owner, f := flagOwner(next, a); owner != nil && f.NoOptDefVal != "" {
			name, _, _ := strings.Cut(a, "=")
			return usageError("%s is a flag of %q, not of %q: put it after the subcommand (%s %s ...)\nRun '%s --help' for usage.",
				name, owner.CommandPath(), cur.CommandPath(), owner.CommandPath(), name, owner.CommandPath())
		}
	}
	return nil
}

// shorthandJoined reports whether a is a shorthand flag with its value joined (-n5).
func shorthandJoined(a string) bool {
	return !strings.HasPrefix(a, "--") && len(a) > 2
}

// lookupFlag returns the flag arg names among c's own flags and its ancestors' persistent ones,
// or nil. help is every command's flag.
func lookupFlag(c *cobra.Command, arg string) *pflag.Flag {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	if name == "" {
		return nil
	}
	if name == "help" || name == "h" {
		return &pflag.Flag{Name: "help", NoOptDefVal: "true"}
	}
	sets := []*pflag.FlagSet{c.Flags()}
	for p := c; p != nil; p = p.Parent() {
		sets = append(sets, p.PersistentFlags())
	}
	for _, fs := range sets {
		var f *pflag.Flag
		if strings.HasPrefix(arg, "--") {
			f = fs.Lookup(name)
		} else {
			f = fs.ShorthandLookup(name[:1])
		}
		if f != nil {
			return f
		}
	}
	return nil
}

// flagOwner returns c or the first command below it that has the flag arg, with the flag, or nil.
func flagOwner(c *cobra.Command, arg string) (*cobra.Command, *pflag.Flag) {
	if f := lookupFlag(c, arg); f != nil {
		return c, f
	}
	for _, sub := range c.Commands() {
		if owner, f := flagOwner(sub, arg); owner != nil {
			return owner, f
		}
	}
	return nil, nil
}
