package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

// Exit codes shared by every command (internal/exitcode).
const (
	exitOK       = exitcode.OK
	exitProblems = exitcode.Problems
	exitUsage    = exitcode.Usage
)

// exitError carries a command's exit code through cobra (exitcode.Error).
type exitError = exitcode.Error

// usageError is an error in how the command was called or an I/O failure (exit 2).
func usageError(format string, args ...any) error { return exitcode.Usagef(format, args...) }

// Run executes the autonomy command line args and returns the process exit code: 0 when all is
// well, 1 when problems were found, 2 on a usage or I/O error.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runOn(newRootFor(args, stdin, stdout, stderr), args, stderr)
}

// runOn executes args on root (newRootFor's tree for them, or newRoot's whole tree), returning the
// exit code.
func runOn(root *cobra.Command, args []string, stderr io.Writer) int {
	if len(args) == 0 {
		// No command is a usage error: the help goes to stderr, and a script that forgot its
		// command fails.
		root.SetOut(stderr)
		_ = root.Help()
		return exitUsage
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		if merr := misplacedFlag(root, args); merr != nil {
			err = merr // what went wrong, rather than cobra's account of its consequence
		}
	}
	if errors.As(err, &ee) {
		if ee.Msg != "" {
			fmt.Fprintln(stderr, "autonomy:", ee.Msg)
		}
		return ee.Code
	}
	// Anything else comes from cobra's own argument and flag parsing: a usage error, with the
	// help of the command that refused it.
	if cmd == nil {
		cmd = root
	}
	if hint := usageHint(cmd, args, err); hint != "" {
		fmt.Fprintf(stderr, "autonomy: %v: %s\n", err, hint)
	} else {
		fmt.Fprintln(stderr, "autonomy:", err)
	}
	fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	return exitUsage
}

// commander is a substrate that contributes to the command line the commands only it has (the
// local substrate's runner and doctor, gh-actions' gh and provision), found on the registry's substrates;
// host lends them what the command line does for every command.
type commander interface {
	Commands(host substrates.Host) []*cobra.Command
}

// builtins are autonomy's own top-level commands (the substrates add theirs: commander), each by
// the name it is run by.
var builtins = []struct {
	name  string
	build func() *cobra.Command
}{
	{"validate", newValidate}, {"compile", newCompile}, {"check", newCheck}, {"conformance", newConformance},
	{"playbook", newPlaybook}, {"catalog", newCatalog}, {"schema", newSchema}, {"version", newVersion},
	{"dev", newDev}, {"init", newInit},
}

// newRoot builds the command tree, complete with the help and completion commands cobra would
// add when run, reading stdin and writing stdout and stderr.
func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	return newRootFor(nil, stdin, stdout, stderr)
}

// newRootFor is newRoot for running args: when args name a top-level command, the root holds
// that one alone, so a process builds no other command's flags (every autonomy process, two per
// launch, would); anything else (no command, help, completion, a flag or an unknown name first)
// gets the whole tree. TestPrunedTreeRunsAsTheWhole holds the two alike.
func newRootFor(args []string, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "autonomy",
		Short: "Validate and compile autonomy.ir.v1 agent-fleet profiles",
		Long: `autonomy reads an autonomy.ir.v1 profile: a team of AI agents and humans described once, with
who they are (actors), what authority each holds (capabilities), when each fires (cron, dispatch,
events) and what each is told (params). It validates the profile against the standard, compiles
it onto a substrate (gh-actions: one GitHub Actions workflow per actor; local: an installation
that autonomy runner runs on this machine), checks installed files against it, and proves the
substrates with a conformance battery.

Exit codes: 0 ok, 1 problems found, 2 usage or I/O error (also when no command is given).`,
		Example: `  autonomy validate profiles/sdlc
  autonomy compile profiles/sdlc --target gh-actions --dir .
  autonomy check profiles/sdlc --target gh-actions
  autonomy runner --dir . launch develop --ref 42
  autonomy conformance
  autonomy catalog capabilities
  autonomy schema > ir.schema.json`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SuggestionsMinimumDistance = 2 // what cobra sets when it suggests, for the help command
	name := ""
	if len(args) > 0 {
		name = args[0]
	}
	for _, b := range builtins {
		if b.name == name {
			root.AddCommand(b.build())
			return finishRoot(root, true)
		}
	}
	host := substrates.Host{LoadForTarget: loadForTarget, Lookup: registry.Lookup, Names: registry.Names}
	pruned := false
	for _, s := range registry.All() {
		if c, ok := s.(commander); ok {
			for _, sub := range c.Commands(host) {
				root.AddCommand(sub)
				pruned = pruned || sub.Name() == name
			}
		}
	}
	if !pruned {
		for _, b := range builtins {
			root.AddCommand(b.build())
		}
	}
	return finishRoot(root, pruned)
}

// finishRoot adds the help command, and the completion command unless the tree is pruned to a
// command that is not it (cobra would add its own when run: this one's examples and output are
// set), guards the command groups and registers the flags' completions.
func finishRoot(root *cobra.Command, pruned bool) *cobra.Command {
	root.SetHelpCommand(newHelp(false))
	root.InitDefaultHelpCmd()
	root.CompletionOptions.DisableDefaultCmd = pruned
	// The completion command writes to the output it finds now: set in newRootFor.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		guardGroups(c)
	}
	addCompletions(root)
	return root
}

// guardGroups makes every command group under c (a command with subcommands and nothing to run
// itself) refuse what is not one of its subcommands, as cobra does for the root only: an unknown
// one exits 2 with the nearest names, and a group given no subcommand prints its help on stderr
// and exits 2, as autonomy does given no command. Without this cobra prints the help and exits 0,
// so a script's mistyped verb (runner lauch) would pass. Each group gets a hidden help command:
// runner help launch is autonomy help runner launch.
func guardGroups(c *cobra.Command) {
	for _, sub := range c.Commands() {
		guardGroups(sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.SuggestionsMinimumDistance = 2 // cobra's default, which it sets on the root only
	c.AddCommand(newHelp(true))
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if near := cmd.SuggestionsFor(args[0]); len(near) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(near, "\n\t") + "\n"
		}
		return usageError("%s\nRun '%s --help' for usage.", msg, cmd.CommandPath())
	}
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		cmd.SetOut(cmd.ErrOrStderr())
		_ = cmd.Help()
		return &exitError{Code: exitUsage, Msg: fmt.Sprintf("%s needs a command", cmd.CommandPath())}
	}
}

// checkFormat refuses an unknown --format value.
func checkFormat(format string, valid ...string) error { return exitcode.CheckFormat(format, valid...) }
