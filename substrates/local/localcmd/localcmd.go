// Package localcmd is the local substrate as the registry lists it: local.Substrate with the
// commands only it has, which it contributes to autonomy's command line: runner (the local
// runner's verbs; another substrate's runner verbs, substrates.RunnerVerbs, are reached through
// it with --target) and doctor. It is a
// package of its own so that package local stays free of the command-line library.
package localcmd

import (
	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// Substrate is local.Substrate, and its commands.
type Substrate struct{ local.Substrate }

// Commands are the commands only the local substrate has.
func (Substrate) Commands(host substrates.Host) []*cobra.Command {
	return []*cobra.Command{newRunner(host), newDoctor()}
}
