package localcmd

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// newDoctor checks a local installation and says what to fix.
func newDoctor() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor [DIR]",
		Short: "Check that a local installation can run its sessions, and say what to fix",
		Long: `doctor checks the local installation in DIR (default: the current directory) with this
shell's environment: the installation and its store, git, and for the agent preset its skills run
with (policy.box.local.agent), the CLI on PATH at its pinned version, the sandbox's helpers
(bubblewrap; socat for claude) and the model credential variable. Each line is "ok" or "fix",
and a fix line ends with what to do.

Exit codes: 0 everything is ready, 1 something must be fixed.`,
		Example: `  autonomy doctor
  autonomy doctor ./my-fleet`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			out := cmd.OutOrStdout()
			bad := 0
			for _, c := range local.Doctor(cmd.Context(), dir, os.Environ()) {
				if c.OK {
					fmt.Fprintf(out, "ok   %s: %s\n", c.Name, c.Detail)
					continue
				}
				bad++
				fmt.Fprintf(out, "fix  %s: %s: %s\n", c.Name, c.Detail, c.Fix)
			}
			if bad > 0 {
				return exitcode.Problemf("%d thing(s) to fix before sessions can run", bad)
			}
			return nil
		},
	}
}
