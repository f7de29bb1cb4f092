package main

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestPrunedTreeRunsAsTheWhole: a process builds only the top-level command it runs
// (newRootFor), and that tree answers as the whole tree does: every command's --help, an
// unknown flag, an unknown subcommand of a group, a group given no subcommand.
func TestPrunedTreeRunsAsTheWhole(t *testing.T) {
	full := newRoot(nil, io.Discard, io.Discard)
	for _, top := range full.Commands() {
		if top.Name() == "help" || top.Name() == "completion" {
			continue
		}
		if got := newRootFor([]string{top.Name(), "--help"}, nil, io.Discard, io.Discard).Commands(); len(got) >= len(full.Commands()) || !slices.ContainsFunc(got, func(c *cobra.Command) bool { return c.Name() == top.Name() }) {
			t.Errorf("the tree for %s holds %d commands, the whole tree %d: it is not pruned to it", top.Name(), len(got), len(full.Commands()))
		}
	}
	var cases [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if len(path) > 0 {
			cases = append(cases, append(slices.Clone(path), "--help"))
			if !c.DisableFlagParsing {
				cases = append(cases, append(slices.Clone(path), "--no-such-flag"))
			}
			if c.HasSubCommands() && !c.Runnable() {
				cases = append(cases, slices.Clone(path), append(slices.Clone(path), "no-such-command"))
			}
		}
		for _, sub := range c.Commands() {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(full, nil)
	cases = append(cases, []string{"runner", "--dir", "d", "--no-such-flag", "launch"}, []string{"runner", "--follow", "logs"}, []string{"compil"}, []string{})
	for _, args := range cases {
		var wantOut, wantErr, gotOut, gotErr bytes.Buffer
		want := runOn(newRoot(strings.NewReader(""), &wantOut, &wantErr), args, &wantErr)
		got := Run(args, strings.NewReader(""), &gotOut, &gotErr)
		if got != want || gotOut.String() != wantOut.String() || gotErr.String() != wantErr.String() {
			t.Errorf("autonomy %s: exit %d, stdout %q, stderr %q\nthe whole tree: exit %d, stdout %q, stderr %q",
				strings.Join(args, " "), got, gotOut.String(), gotErr.String(), want, wantOut.String(), wantErr.String())
		}
	}
	t.Logf("%d command lines", len(cases))
}
