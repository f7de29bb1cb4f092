package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// jobOnly are the commands no person runs: those that run only inside the jobs autonomy compiles
// for gh-actions, the MCP server a session's agent CLI starts and the gh shim its shell runs. Their --help names the
// environment they read instead of examples a person could run.
var jobOnly = []string{"autonomy gh", "autonomy playbook step", "autonomy runner mcp", "autonomy runner gh", "autonomy runner bun"}

// TestEveryCommandHasExamples: every command a person runs has examples in its --help (which
// TestHelpExamplesWork runs).
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, j := range jobOnly {
			if c.CommandPath() == j || strings.HasPrefix(c.CommandPath(), j+" ") {
				return
			}
		}
		if !c.Hidden && c.Name() != "help" && strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no examples in its --help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(nil, io.Discard, io.Discard))
}
