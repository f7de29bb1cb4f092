package main

import (
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// groups returns every command of the tree that has subcommands, the root included, by path.
func groups(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	if c.HasAvailableSubCommands() {
		out = append(out, c)
	}
	for _, sub := range c.Commands() {
		out = append(out, groups(sub)...)
	}
	return out
}

// TestUnknownSubcommandExits2: in every command group, found by walking the cobra tree, a
// mistyped subcommand exits 2 naming it with the nearest subcommand, an unknown one exits 2, and
// the group given none prints its help on stderr and exits 2; --help still exits 0.
func TestUnknownSubcommandExits2(t *testing.T) {
	all := groups(newRoot(nil, io.Discard, io.Discard))
	if len(all) < 4 { // the root, runner, playbook, gh
		t.Fatalf("only %d command groups", len(all))
	}
	// The cases of the issue.
	for _, args := range [][]string{{"runner", "lauch", "x"}, {"playbook", "explode"}, {"gh", "explode"}} {
		if code, _, errOut := run(t, args...); code != 2 || !strings.Contains(errOut, `unknown command "`+args[1]+`"`) {
			t.Errorf("autonomy %s: exit %d, want 2\n%s", strings.Join(args, " "), code, errOut)
		}
	}
	for _, g := range all {
		path := strings.Fields(g.CommandPath())[1:] // without "autonomy"
		var first string
		for _, sub := range g.Commands() {
			// A shim (runner gh, runner bun) reads --help as its program's argument.
			if sub.IsAvailableCommand() && len(sub.Name()) >= 3 && !sub.DisableFlagParsing {
				first = sub.Name()
				break
			}
		}
		typo := first[:1] + first[2:] // one letter dropped: launch → lunch
		code, out, errOut := run(t, append(path, typo, "x")...)
		if code != 2 || out != "" || !strings.Contains(errOut, `unknown command "`+typo+`" for "`+g.CommandPath()+`"`) ||
			!strings.Contains(errOut, "Did you mean this?\n") || !strings.Contains(errOut, "\t"+first+"\n") {
			t.Errorf("autonomy %s: exit %d, want 2 and did you mean %q\nstdout: %s\nstderr: %s", strings.Join(append(path, typo), " "), code, first, out, errOut)
		}
		code, out, errOut = run(t, append(path, "explode")...)
		if code != 2 || out != "" || !strings.Contains(errOut, `unknown command "explode"`) {
			t.Errorf("autonomy %s explode: exit %d, want 2\nstdout: %s\nstderr: %s", strings.Join(path, " "), code, out, errOut)
		}
		if len(path) > 0 {
			code, out, errOut = run(t, path...)
			if code != 2 || out != "" || !strings.Contains(errOut, "Available Commands:") {
				t.Errorf("autonomy %s: exit %d, want 2 and the help on stderr\nstdout: %s\nstderr: %s", strings.Join(path, " "), code, out, errOut)
			}
		}
		if code, out, _ := run(t, append(path, "--help")...); code != 0 || !strings.Contains(out, "Available Commands:") {
			t.Errorf("autonomy %s --help: exit %d\n%s", strings.Join(path, " "), code, out)
		}
		checkHelpPaths(t, g, path, first, typo)
	}
	// A group found by walking the tree includes the completion command, which cobra adds.
	if !slices.ContainsFunc(all, func(g *cobra.Command) bool { return g.Name() == "completion" }) {
		t.Error("the completion command is not among the groups")
	}
	for _, leaf := range leaves(newRoot(nil, io.Discard, io.Discard)) {
		checkExtraArgs(t, leaf)
	}
}

// checkHelpPaths: in group g (at path, with the subcommand first and a typo of it), help and
// PATH help name what autonomy PATH --help does, an unknown topic exits 2 with the nearest
// name, and a switch of a subcommand given before it is said to belong after it.
func checkHelpPaths(t *testing.T, g *cobra.Command, path []string, first, typo string) {
	t.Helper()
	at := strings.Join(path, " ")
	_, wantOut, _ := run(t, append(path, first, "--help")...)
	for _, args := range [][]string{append([]string{"help"}, append(path, first)...), append(path, "help", first)} {
		if code, out, errOut := run(t, args...); code != 0 || out != wantOut || errOut != "" {
			t.Errorf("autonomy %s: exit %d, want 0 and the output of %s %s --help\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, at, first, out, errOut)
		}
	}
	for _, args := range [][]string{append([]string{"help"}, append(path, typo)...), append(path, "help", typo)} {
		code, out, errOut := run(t, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "unknown help topic") || !strings.Contains(errOut, "Did you mean this?\n") ||
			!strings.Contains(errOut, "\t"+first+"\n") || !strings.Contains(errOut, "Run '"+g.CommandPath()+" --help' for usage.") {
			t.Errorf("autonomy %s: exit %d, want 2 and did you mean %q\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, first, out, errOut)
		}
	}
	if code, out, _ := run(t, append(path, "help")...); code != 0 || !strings.Contains(out, "Available Commands:") {
		t.Errorf("autonomy %s help: exit %d, want 0 and the help\n%s", at, code, out)
	}
	// A switch of a subcommand (not of the group) before it: cobra takes the subcommand for its value.
	for _, sub := range g.Commands() {
		var flag string
		sub.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if flag == "" && f.NoOptDefVal != "" && f.Name != "help" && lookupFlag(g, "--"+f.Name) == nil {
				flag = "--" + f.Name
			}
		})
		if flag == "" || !sub.IsAvailableCommand() {
			continue
		}
		args := append(slices.Clone(path), flag, sub.Name(), "x")
		code, out, errOut := run(t, args...)
		if want := flag + " is a flag of \"" + sub.CommandPath() + "\""; code != 2 || out != "" || !strings.Contains(errOut, want) || !strings.Contains(errOut, "put it after the subcommand") {
			t.Errorf("autonomy %s: exit %d, want 2 and %q\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, errOut)
		}
	}
}

// leaves returns every command of the tree that has no subcommands.
func leaves(c *cobra.Command) []*cobra.Command {
	if !c.HasSubCommands() {
		return []*cobra.Command{c}
	}
	var out []*cobra.Command
	for _, sub := range c.Commands() {
		out = append(out, leaves(sub)...)
	}
	return out
}

// checkExtraArgs: a command that refuses extra arguments exits 2 pointing at its own --help.
func checkExtraArgs(t *testing.T, leaf *cobra.Command) {
	t.Helper()
	extra := []string{"x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9"}
	if leaf.Args == nil || leaf.Args(leaf, extra) == nil {
		return // it takes them (and would run): nothing to check
	}
	path := strings.Fields(leaf.CommandPath())[1:]
	code, out, errOut := run(t, append(path, extra...)...)
	if code != 2 || out != "" || !strings.HasSuffix(errOut, "Run '"+leaf.CommandPath()+" --help' for usage.\n") {
		t.Errorf("autonomy %s x1…x9: exit %d, want 2 and its --help named\nstdout: %s\nstderr: %s", strings.Join(path, " "), code, out, errOut)
	}
}

// TestHelpAndCompletionCases are the cases of the review: each exits 2 with the fix.
func TestHelpAndCompletionCases(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"help", "lauch"}, "unknown help topic \"lauch\" for \"autonomy\"\n\nDid you mean this?\n\trunner launch\n"},
		{[]string{"help", "runner", "lanch"}, "unknown help topic \"runner lanch\" for \"autonomy runner\"\n\nDid you mean this?\n\tlaunch\n"},
		{[]string{"runner", "help", "lauch"}, "unknown help topic \"lauch\" for \"autonomy runner\"\n\nDid you mean this?\n\tlaunch\n"},
		{[]string{"completion"}, "autonomy completion needs a command"},
		{[]string{"completion", "bashh"}, "unknown command \"bashh\" for \"autonomy completion\"\n\nDid you mean this?\n\tbash\n"},
		{[]string{"runner", "list", "extra"}, "Run 'autonomy runner list --help' for usage."},
		{[]string{"--strict", "validate", "profiles/hello"}, "--strict is a flag of \"autonomy validate\", not of \"autonomy\": put it after the subcommand (autonomy validate --strict ...)"},
	} {
		if code, _, errOut := run(t, c.args...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("autonomy %s: exit %d, want 2 and %q in:\n%s", strings.Join(c.args, " "), code, c.want, errOut)
		}
	}
	if code, out, _ := run(t, "completion", "bash"); code != 0 || !strings.Contains(out, "# bash completion V2 for autonomy") {
		t.Errorf("autonomy completion bash: exit %d\n%s", code, out)
	}
	// help completes its topics, as cobra's own help command did.
	for _, args := range [][]string{{"__complete", "help", "runner", "la"}, {"__complete", "runner", "help", "la"}} {
		if code, out, _ := run(t, args...); code != 0 || !strings.HasPrefix(out, "launch\t") {
			t.Errorf("autonomy %s: exit %d, want launch\n%s", strings.Join(args, " "), code, out)
		}
	}
}

// TestRunnerLaunchSuggestsActor: runner launch of an actor the installation does not have (or a
// name no actor can have) names the nearest actor.
func TestRunnerLaunchSuggestsActor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fleet")
	if code, _, errOut := run(t, "compile", "../../profiles/sdlc", "--target", "local", "--out", dir); code != 0 {
		t.Fatalf("compile: exit %d\n%s", code, errOut)
	}
	for name, want := range map[string]string{
		"develp":  `no actor "develp" in ` + dir + ` (did you mean "develop"? actors: pm, draft, develop,`,
		"Develop": `"Develop" is not an actor name (did you mean "develop"? actors: pm,`,
		"xyzzy":   `no actor "xyzzy" in ` + dir + ` (actors: pm, draft, develop,`,
	} {
		code, _, errOut := run(t, "runner", "--dir", dir, "launch", name, "--ref", "1")
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("launch %s: exit %d, want 1 and %q in:\n%s", name, code, want, errOut)
		}
	}
}
