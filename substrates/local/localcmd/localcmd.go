// Package localcmd is the local substrate as the registry lists it: local.Substrate with the
// commands only it has, which it contributes to autonomy's command line: runner (the local
// runner's verbs; another substrate's runner verbs, substrates.RunnerVerbs, are reached through
// it with --target) and doctor. It is a
// package of its own so that package local stays free of the command-line library.
package localcmd

import (
	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/playbook/runtimes"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// Substrate is local.Substrate, and its commands. Its runners host the playbook runtimes
// (playbook/runtimes.Host, local.PlaybookHost), which package local does not import.
type Substrate struct{ local.Substrate }

// ProbeTargets are local.Substrate's, their runners hosting the playbook runtimes.
func (Substrate) ProbeTargets(env substrates.ProbeEnv) ([]substrates.ProbeTarget, error) {
	return local.Substrate{Playbooks: runtimes.Host{}}.ProbeTargets(env)
}

// Commands are the commands only the local substrate has.
func (Substrate) Commands(host substrates.Host) []*cobra.Command {
	return []*cobra.Command{newRunner(host), newDoctor()}
}
