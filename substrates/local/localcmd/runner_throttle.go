package localcmd

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/substrates/local"
)

func newRunnerPause(f *runnerFlags) *cobra.Command {
	var item, reason string
	cmd := &cobra.Command{
		Use:   "pause [--item REF] [--reason TEXT]",
		Short: "Pause the fleet (the kill switch), or one work item: nothing new starts until resume",
		Long: `pause records a pause in the installation's store, where every runner process reads it.
While the fleet is paused, launch refuses (exit 1, naming the pause and the resume command),
tick and serve fire nothing (the cron slots and the events that come meanwhile are dropped,
not fired at the resume, as AUTONOMY_PAUSED does on GitHub), the code flow launches no
reviewer and merges nothing, and no open ask is escalated. With --item REF only the sessions
of that work item (launched with --ref REF, subject.ref) and its events are held.

Sessions already running are left to end as they would (cancel stops one). A person's ask can
still be made and answered; only its escalation waits. Only the operator may pause: a session calling it is denied. With no pause in force,
pause with no flags pauses the fleet; run it again to change the reason.`,
		Example: `  autonomy runner pause --reason "the model bill spiked"
  autonomy runner pause --item 42
  autonomy runner resume`,
		Args: cobra.NoArgs,
		RunE: f.with(false, func(cmd *cobra.Command, args []string, r *local.Runner) error {
			t, err := r.Pause(cmd.Context(), item, reason)
			if err != nil {
				return runnerError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "paused %s\n", cliout.TerminalSafe(t.Scope))
			return nil
		}),
	}
	cmd.Flags().StringVar(&item, "item", "", "pause only the sessions of this work item (subject.ref)")
	cmd.Flags().StringVar(&reason, "reason", "", "why, shown to whoever is refused")
	return cmd
}

func newRunnerResume(f *runnerFlags) *cobra.Command {
	var item string
	cmd := &cobra.Command{
		Use:   "resume [--item REF]",
		Short: "Lift the fleet's pause, or a work item's",
		Long: `resume lifts the pause runner pause recorded (of the fleet, or with --item of one work
item). It exits 1 when no such pause stands. The schedule resumes from now: slots that came due
while paused are not fired.`,
		Example: `  autonomy runner resume
  autonomy runner resume --item 42`,
		Args: cobra.NoArgs,
		RunE: f.with(false, func(cmd *cobra.Command, args []string, r *local.Runner) error {
			ok, err := r.Resume(cmd.Context(), item)
			if err != nil {
				return runnerError(err)
			}
			scope := local.ThrottleScope(item)
			if !ok {
				return runnerError(&local.RefusedError{Msg: fmt.Sprintf("%s is not paused", scope)})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "resumed %s\n", cliout.TerminalSafe(scope))
			return nil
		}),
	}
	cmd.Flags().StringVar(&item, "item", "", "lift only this work item's pause")
	return cmd
}

// printThrottles adds the pauses in force to runner list.
func printThrottles(w io.Writer, ts []store.Throttle) {
	for _, t := range ts {
		line := "paused: " + t.Scope + " since " + t.At.UTC().Format(time.RFC3339)
		if t.By != "" {
			line += " by " + t.By
		}
		if t.Reason != "" {
			line += " (" + t.Reason + ")"
		}
		fmt.Fprintln(w, cliout.TerminalSafe(line))
	}
}

// throttles reads the pauses in force for runner list; none when they cannot be read.
func throttles(ctx context.Context, r *local.Runner) []store.Throttle {
	ts, _ := r.Throttles(ctx)
	return ts
}
