package ghcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghproxy"
)

// ghModelVerbs are the agent job's model proxy: started before the agent, reported after it.
func ghModelVerbs() []*cobra.Command {
	var serve bool
	start := &cobra.Command{
		Use:   "model-proxy",
		Short: "Start the model proxy the agent reaches its model through, holding the real credential",
		Long: `Runs in the agent job, before the agent. Starts the model proxy detached (it serves until
gh model-usage stops it or the job ends) with the credential named by AUTONOMY_CREDENTIAL_ENV,
the upstream AUTONOMY_MODEL_URL (empty: the public API), the API AUTONOMY_MODEL_API (openai or
anthropic) and the budget and prices AUTONOMY_MODEL_POLICY; it waits until the proxy accepts
connections and appends to $GITHUB_ENV the proxy's base URL as AUTONOMY_MODEL_URL and a
placeholder key under the credential's name, which is all the agent's steps get. The transcript
and the usage are kept under $RUNNER_TEMP/autonomy-model. See docs/gh-actions.md.`,
		Example: `  RUNNER_TEMP=job GITHUB_ENV=job/env OPENAI_API_KEY=sk-… AUTONOMY_CREDENTIAL_ENV=OPENAI_API_KEY AUTONOMY_MODEL_API=openai autonomy gh model-proxy`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if serve {
				ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
				defer stop()
				return ghproxy.Serve(ctx, cmd.InOrStdin(), os.Stdout)
			}
			exe, err := os.Executable()
			if err != nil {
				return exitcode.Usagef("model-proxy: %v", err)
			}
			url, err := ghproxy.Start(context.Background(), os.Getenv, []string{exe, "gh", "model-proxy", "--serve"})
			if err != nil {
				return exitcode.Usagef("model-proxy: %v", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "model proxy listening: %s\n", url)
			return nil
		},
	}
	start.Flags().BoolVar(&serve, "serve", false, "serve (what model-proxy runs detached; its config arrives on stdin)")
	_ = start.Flags().MarkHidden("serve")
	usage := &cobra.Command{
		Use:   "model-usage",
		Short: "Stop the model proxy, write the run's usage to the step summary, fail past the budget",
		Long: `Runs last in the agent job, whatever came before. Stops the model proxy gh model-proxy
started, prints the run's usage (requests, tokens, cost against the budget) and adds it as a
table to $GITHUB_STEP_SUMMARY. Exit codes: 0 within the budget, 1 when the budget refused a
request (the job's annotation says "budget exhausted: …"), 2 when the proxy left no usage.`,
		Example: `  RUNNER_TEMP=job GITHUB_STEP_SUMMARY=job/summary.md autonomy gh model-usage`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := ghproxy.Report(os.Getenv, cmd.OutOrStdout())
			switch {
			case errors.Is(err, ghproxy.ErrExhausted):
				fmt.Fprintf(cmd.OutOrStdout(), "::error::%v\n", err)
				return exitcode.Problemf("%v", err)
			case err != nil:
				return exitcode.Usagef("model-usage: %v", err)
			}
			return nil
		},
	}
	return []*cobra.Command{start, usage}
}
