package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// jobOnly are the commands that run only inside the jobs autonomy compiles for gh-actions that
// have no examples yet, each with the reason: their --help names the environment they read. Every other gh verb has examples, which TestHelpExamplesWork runs as its
// job would (gh_examples_test.go). A command listed here that has examples is an error: drop it.
var jobOnly = []string{
	// The gh and bun shims a preset session's shell runs first on its PATH (hands_shim.go): they
	// read their arguments as gh and bun do, so --help is an argument of theirs.
	"autonomy runner gh",
	"autonomy runner bun",
	// A Kubernetes session container's entry point (its PodTemplate's args), run by the kubelet
	// with the pod's environment; TestSessionEntryPointWritesTheCheckedResult runs it as a pod
	// would. Hidden, as runner supervise is.
	"autonomy runner session",
	// The entry point of a Kubernetes fleet's model proxy Deployment (its container's args),
	// reading the env the Deployment sets; TestModelProxyEntryPointServesWithTheSecretsKey runs
	// it as the pod would. Hidden, as runner session is.
	"autonomy runner model-proxy",
}

// TestEveryCommandHasExamples: every command a person runs has examples in its --help (which
// TestHelpExamplesWork runs).
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, j := range jobOnly {
			if c.CommandPath() == j && strings.TrimSpace(c.Example) != "" {
				t.Errorf("%s has examples now: remove it from jobOnly", j)
			}
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
