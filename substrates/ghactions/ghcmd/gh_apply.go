package ghcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/internal/mcpserver"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// ghSafeOutputVerbs are the two ends of a model job's safe outputs (docs/gh-actions.md): mcp,
// the MCP server the agent CLI starts in the model's job, which records the effects it checked;
// apply, the trusted job after it, which checks them again and realizes them.
func ghSafeOutputVerbs() []*cobra.Command {
	mcp := &cobra.Command{
		Use:   "mcp",
		Short: "The MCP server of a model job: its tools, recording effects as safe outputs",
		Long: `Started by the agent CLI in the agent job (the preset's MCP words). Serves MCP on stdio: the
tools of the actor AUTONOMY_ACTOR as installed at GITHUB_SHA (.autonomy/gh-actions/manifest.json
and .autonomy/policy.json, read with git show in GITHUB_WORKSPACE, never from the working tree),
reads answered with the job's read-only GH_TOKEN, each effect checked and appended to the
safe-output file AUTONOMY_OUTPUTS for this session (GITHUB_RUN_ID). The example is an MCP
client's handshake and tools/list, one JSON-RPC message a line, as the agent CLI sends them.`,
		Example: `  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | GITHUB_REPOSITORY=o/r GH_TOKEN=… GITHUB_SHA=… GITHUB_RUN_ID=7 AUTONOMY_POLICY=.autonomy/policy.json AUTONOMY_ACTOR=pm AUTONOMY_OUTPUTS=outputs.jsonl autonomy gh mcp`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			s, err := effect.MCPSessionFromEnv(ctx, os.Getenv)
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			defer s.Outputs.Close()
			if err := mcpserver.Serve(ctx, s.Session, mcpserver.Recorder{Reader: s.Reads, Outputs: s.Outputs}); err != nil {
				return exitcode.Usagef("mcp: %v", err)
			}
			return nil
		},
	}
	var outputs string
	apply := &cobra.Command{
		Use:   "apply --outputs FILE",
		Short: "Check a model job's safe outputs again and apply them",
		Long: `Runs in the apply job after an agent job. Reads the manifest and the policy at GITHUB_SHA with
git show, the safe-output file of the agent job's run (GITHUB_RUN_ID) of the actor
AUTONOMY_ACTOR, checks every effect against the actor's installed capabilities and scopes and
the caps of policy.box.gh-actions.tools.max, and applies what passes with GH_TOKEN; with
policy.box.gh-actions.tools.staged: true it applies nothing. Each effect's fate is written to
the step summary (GITHUB_STEP_SUMMARY) and the log. Then, for an actor with a result contract (the
manifest's result, autonomy.result.v1 by default or a declared one, or its resultSchema, an
inline schema read at GITHUB_SHA), it verifies the session is done: the result it delivered
through submit_result (for a declared contract, its output member), else the final message
the agent job exported beside the safe-output file (result.json), must validate, and for the
default contract say done.

Exit codes: 0 done, refused effects included (they are reported); 1 the session delivered no
valid result, or reported its work failed (the run ends failed, naming the missing or invalid
field); 2 an unreadable safe-output file or installation, or a GitHub error.`,
		Example: `  GITHUB_REPOSITORY=o/r GH_TOKEN=… GITHUB_SHA=… GITHUB_RUN_ID=7 AUTONOMY_POLICY=.autonomy/policy.json AUTONOMY_ACTOR=pm autonomy gh apply --outputs outputs.jsonl`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := effect.FromEnv(os.Getenv, cmd.OutOrStdout())
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			applied, staged, err := effect.ApplyFile(context.Background(), e, os.Getenv("GITHUB_SHA"), outputs)
			if werr := writeSummary(cmd, e.Actor, staged, applied); werr != nil && err == nil {
				err = werr
			}
			var none *effect.NoResult
			if errors.As(err, &none) {
				return exitcode.Problemf("%v", err)
			}
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			return nil
		},
	}
	apply.Flags().StringVar(&outputs, "outputs", "", "the safe-output file of the agent job")
	_ = apply.MarkFlagRequired("outputs")
	return []*cobra.Command{mcp, apply}
}

// writeSummary prints the fates and appends them to the step summary.
func writeSummary(cmd *cobra.Command, actor string, staged bool, applied []effect.Applied) error {
	if err := effect.WriteSummary(cmd.OutOrStdout(), actor, staged, applied); err != nil {
		return err
	}
	path := os.Getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("step summary: %v", err)
	}
	defer f.Close()
	return effect.WriteSummary(f, actor, staged, applied)
}
