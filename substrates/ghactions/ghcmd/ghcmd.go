// Package ghcmd is the gh-actions substrate as the registry lists it: ghactions.Substrate with
// the commands only it has, which it contributes to autonomy's command line: gh (what the trusted
// jobs of an installation run) and provision (the repository an installation assumes). It is a
// package of its own so that package ghactions stays free of the command-line library.
package ghcmd

import (
	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
)

// Substrate is ghactions.Substrate, and its commands.
type Substrate struct{ ghactions.Substrate }

// Commands are the commands only the gh-actions substrate has.
func (Substrate) Commands(host substrates.Host) []*cobra.Command {
	return []*cobra.Command{newGH(), newProvision(host)}
}
