package localcmd

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// newDoctor checks a local installation and says what to fix.
func newDoctor() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "doctor [DIR]",
		Short: "Check that a local installation can run its sessions, and say what to fix",
		Long: `doctor checks the local installation in DIR (default: the current directory) with this
shell's environment: the installation and its store, git, autonomy itself (the runner puts its own
binary first on every session's PATH), gh when the repository has a GitHub remote, and for the
agent preset its skills run with (policy.box.local.agent), the CLI at its pinned version (on PATH,
else in the agent cache make agent-install fills), the sandbox programs (on Linux bwrap and
socat, which the network sandbox every agent session runs in needs, the system's bwrap even for
codex, which bundles one for its own sandbox only; elsewhere the preset's: bwrap, and socat for
claude) and the model credential variable. Each line is "ok" or "fix", and a fix line ends with
what to do. --format json prints {"ok": bool, "checks": [{"name", "ok", "detail", "fix"}]}.

Exit codes: 0 everything is ready, 1 something must be fixed.`,
		Example: `  autonomy doctor
  autonomy doctor ./my-fleet
  autonomy doctor --format json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if err := exitcode.CheckFormat(format, "text", "json"); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			checks := local.Doctor(cmd.Context(), dir, os.Environ())
			if format == "json" {
				return doctorJSON(out, checks)
			}
			bad := 0
			for _, c := range checks {
				if c.OK && c.Fix != "" {
					fmt.Fprintf(out, "note %s: %s: %s\n", c.Name, c.Detail, c.Fix)
					continue
				}
				if c.OK {
					fmt.Fprintf(out, "ok   %s: %s\n", c.Name, c.Detail)
					continue
				}
				bad++
				fmt.Fprintf(out, "fix  %s: %s: %s\n", c.Name, c.Detail, c.Fix)
			}
			if bad > 0 {
				things := "things"
				if bad == 1 {
					things = "thing"
				}
				return exitcode.Problemf("%d %s to fix before sessions can run", bad, things)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}

// doctorCheck is one check in --format json.
type doctorCheck struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// doctorJSON prints the checks as JSON; the exit code is text's.
func doctorJSON(out io.Writer, checks []local.Check) error {
	rep := struct {
		OK     bool          `json:"ok"`
		Checks []doctorCheck `json:"checks"`
	}{OK: true, Checks: make([]doctorCheck, 0, len(checks))}
	bad := 0
	for _, c := range checks {
		rep.Checks = append(rep.Checks, doctorCheck{Name: c.Name, OK: c.OK, Detail: c.Detail, Fix: c.Fix})
		if !c.OK {
			rep.OK = false
			bad++
		}
	}
	if err := cliout.WriteJSON(out, rep); err != nil {
		return err
	}
	if bad > 0 {
		return &exitcode.Error{Code: exitcode.Problems}
	}
	return nil
}
