package localcmd

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/substrates/local"
)

func newRunnerTick(f *runnerFlags) *cobra.Command {
	var humans string
	cmd := &cobra.Command{
		Use:   "tick",
		Short: "Fire every cron trigger that came due since the last tick (run it from cron, or use serve)",
		Long: `tick fires every cron trigger of the installation whose schedule came due since the last
tick, in policy.box.local.timezone (UTC by default). After downtime a missed schedule fires
once, not once per missed slot. A due actor that cannot start (maxConcurrent reached, or its
last scheduled session still running) is deferred to the next tick and recorded, never dropped.
The first tick of an installation only starts the schedule. Each tick also escalates every ask
to a person left open past policy.box.human.sla_minutes (60 by default) to the next of
policy.box.local.maintainers. --humans FILE registers a human simulator first (docs/local.md,
"Human simulators"); each tick answers the simulated asks that came due.`,
		Example: `  autonomy runner tick
  autonomy runner tick --humans testbed/humans.yml`,
		Args: cobra.NoArgs,
		RunE: f.with(false, func(cmd *cobra.Command, args []string, r *local.Runner) error {
			if err := setHumans(cmd, r, humans); err != nil {
				return err
			}
			rep, err := r.Tick(cmd.Context())
			local.PrintTick(cmd.OutOrStdout(), rep) // what it did, even when it also refused something
			for _, u := range rep.Unready {
				// Nothing of it is due: no error (a crontab's tick would fail every minute), said.
				fmt.Fprintf(cmd.ErrOrStderr(), "autonomy: warning: %s (nothing of it is due now: its triggers are deferred, and tick exits 1, when they come due)\n", cliout.TerminalSafe(u.Reason))
			}
			if err != nil {
				return runnerError(err)
			}
			return nil
		}),
	}
	humansFlag(cmd, &humans)
	return cmd
}

func newRunnerServe(f *runnerFlags) *cobra.Command {
	var humans string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Tick at each due minute until SIGINT or SIGTERM",
		Long: `serve runs the trigger executor: it ticks whenever a cron trigger comes due (and each minute
while a deferred one waits) until SIGINT or SIGTERM, then stops cleanly. Sessions it started run
under their own supervisors and stay tracked after it stops. A recompile takes effect at the next
tick.

For a codeHost: github fleet whose actors declare event triggers, serve also polls the repository
every policy.box.local.events.poll_seconds for comments (/agent ACTOR from a trusted author),
issues and pull requests, and fires the actors that declare them, gated as the workflows are,
each event once. It reads GitHub with
GH_TOKEN or GITHUB_TOKEN (never given to a session), at GITHUB_API_URL, in events.repo or
GITHUB_REPOSITORY or the origin remote. Each tick also escalates the asks to people left open past
policy.box.human.sla_minutes. See docs/local.md, "Events".

--humans FILE realizes the fleet's people with a simulator for a testbed: the fixtures say, per
human actor, which asks it answers with what, after how long, or never; the simulator redeems
each ask's token as a person would. It stays registered until --humans off. See docs/local.md,
"Human simulators".`,
		Example: `  autonomy runner serve
  autonomy runner serve --humans testbed/humans.yml`,
		Args: cobra.NoArgs,
		RunE: f.with(false, func(cmd *cobra.Command, args []string, r *local.Runner) error {
			if err := setHumans(cmd, r, humans); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			errOut := cmd.ErrOrStderr()
			if err := r.PreflightSchedule(); err != nil {
				// Its ticks defer what cannot start and do the rest (the other actors, the asks'
				// escalations): said now, and by the first tick that defers it.
				fmt.Fprintf(errOut, "autonomy: warning: %v; its due triggers are deferred until it can start\n", err)
			}
			warnNoModelCredential(errOut, r)
			free, alone := r.HoldServe()
			defer free()
			if !alone {
				fmt.Fprintln(errOut, "autonomy: note: another runner serve is serving this installation already: both tick, and the store keeps them from firing a trigger twice; stop one of them")
			}
			next := ""
			if actor, at, ok := r.NextFiring(time.Now()); ok {
				next = fmt.Sprintf("; next: %s at %s", actor, at.Format("2006-01-02 15:04 MST"))
			}
			fmt.Fprintf(errOut, "autonomy: serving %s (%s, timezone %s%s); SIGINT or SIGTERM stops\n", r.In.Dir, cliout.Count(len(r.In.Schedule.Entries), "scheduled trigger"), r.In.Schedule.Timezone, next)
			watchEvents(r, errOut)
			if err := r.Serve(ctx, cmd.OutOrStdout()); err != nil {
				return runnerError(err)
			}
			fmt.Fprintln(errOut, "autonomy: stopped; running sessions stay tracked")
			return nil
		}),
	}
	humansFlag(cmd, &humans)
	return cmd
}

// warnNoModelCredential says, as serve starts, which actors' sessions would run their agent CLI
// without a model proxy (no model key in serve's environment), as launch says it of one.
func warnNoModelCredential(errOut io.Writer, r *local.Runner) {
	var first string
	var others []string
	for _, a := range r.In.Runner.Actors {
		if warn := r.NoModelCredential(a); warn != "" {
			if first == "" {
				first = warn
			} else {
				others = append(others, a)
			}
		}
	}
	if first == "" {
		return
	}
	if len(others) > 0 {
		first += fmt.Sprintf(" (so do the sessions of %s)", strings.Join(others, ", "))
	}
	fmt.Fprintln(errOut, "autonomy: warning:", first)
}
