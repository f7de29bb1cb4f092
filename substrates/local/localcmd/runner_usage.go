package localcmd

import (
	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/exitcode"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/substrates/local"
)

// newRunnerUsage is runner usage: the model usage of the installation's sessions, summed.
func newRunnerUsage(f *runnerFlags) *cobra.Command {
	var since, actor string
	cmd := &cobra.Command{
		Use:   "usage [--since D] [--actor A]",
		Short: "Sum the model requests, tokens and cost of the sessions behind a model proxy",
		Long: `usage sums what the model proxy beside each preset session counted (docs/local.md, "The
model proxy"): requests, input, cached input and output tokens, and their cost priced by
policy.box.local.model.prices. --since is a duration back from now (24h, 7d), a date (midnight
in policy.box.local.timezone) or an RFC 3339 time; --actor keeps one actor's sessions.`,
		Example: `  autonomy runner usage --since 7d --actor develop
  autonomy runner usage --since 2026-03-01 --format json`,
		Args: cobra.NoArgs,
		RunE: f.with(true, func(cmd *cobra.Command, args []string, r *local.Runner) error {
			from, err := local.ParseSince(since, r.Now(), r.Location())
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			u, err := r.SumUsage(cmd.Context(), from, actor)
			if err != nil {
				return runnerError(err)
			}
			if f.format == "json" {
				return cliout.WriteJSON(cmd.OutOrStdout(), u)
			}
			local.PrintUsage(cmd.OutOrStdout(), u)
			return nil
		}),
	}
	cmd.Flags().StringVar(&since, "since", "", "only usage recorded since: 24h, 7d, 2026-03-01 or an RFC 3339 time")
	cmd.Flags().StringVar(&actor, "actor", "", "only this actor's sessions")
	cmd.Flags().StringVar(&f.format, "format", "text", "output format: text or json")
	return cmd
}

// withTranscript gives runner logs its --transcript flag: the session's model transcript (JSON
// lines) instead of its output.
func withTranscript(f *runnerFlags, logs *cobra.Command) *cobra.Command {
	var transcript bool
	logs.Flags().BoolVar(&transcript, "transcript", false, "print the session's model transcript (JSON lines, one request and its response each) instead of its output")
	logs.Use = "logs ID [-f | --transcript]"
	logs.Example = strings.TrimPrefix(logs.Example+"\n  autonomy runner logs 7-k3qa --transcript", "\n")
	output := logs.RunE
	transcriptOf := f.with(false, func(cmd *cobra.Command, args []string, r *local.Runner) error {
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := r.Transcript(ctx, args[0], cmd.OutOrStdout()); err != nil {
			return runnerError(err)
		}
		return nil
	})
	logs.RunE = func(cmd *cobra.Command, args []string) error {
		if transcript {
			if follow, _ := cmd.Flags().GetBool("follow"); follow {
				return exitcode.Usagef("--transcript and --follow do not go together: a transcript is printed once")
			}
			return transcriptOf(cmd, args)
		}
		return output(cmd, args)
	}
	return logs
}

// printSessionUsage adds a session's model usage to runner get's text, when it has any.
func printSessionUsage(w io.Writer, r *local.Runner, cmd *cobra.Command, id string) {
	if u, ok, err := r.SessionUsage(cmd.Context(), id); err == nil && ok {
		local.PrintUsage(w, u)
	}
}

// sessionUsage is a session's model usage for runner get's JSON, nil when it has none.
func sessionUsage(r *local.Runner, cmd *cobra.Command, id string) any {
	if u, ok, err := r.SessionUsage(cmd.Context(), id); err == nil && ok {
		u.Session, u.Actor = "", ""
		return &u
	}
	return nil
}
