package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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
	all := groups(newRoot())
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
			if sub.IsAvailableCommand() && len(sub.Name()) >= 3 {
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
