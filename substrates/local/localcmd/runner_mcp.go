package localcmd

import (
	"context"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/internal/mcpserver"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// newRunnerMCP is runner mcp: the MCP server of a local session, which its agent CLI starts.
func newRunnerMCP(f *runnerFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "The MCP server of a local session: its tools, realized by the runner",
		Long: `Started by a preset's agent CLI (codex, claude) for its session, outside the CLI's sandbox, with
the absolute path of the autonomy binary that runs the runner (docs/local.md, "The agent's
tools"). Serves MCP on stdio: the tools of the session's actor ($AUTONOMY_SESSION) as installed
(docs/tools.md), each call checked against its capabilities, scopes and caps, and realized by
the runner as that session, which must be in flight. Without $AUTONOMY_SESSION, or from inside
another session, it is refused. With --target kubernetes it is the MCP server of a skill's session
in its pod instead (docs/kubernetes.md, "Skills in the pod").

The example is an MCP client's handshake and tools/list, one JSON-RPC message a line, for the
session 7-k3qa in flight: name one of yours that is (autonomy runner list), or it is refused
(the agent CLI's client keeps its stdin open; at the end of its input the server answers what it
has read, then exits).

Exit codes: 0 the client went away; 1 refused; 2 an I/O error.`,
		Example: `  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | AUTONOMY_SESSION=7-k3qa autonomy runner mcp`,
		Args:    cobra.NoArgs,
		RunE: f.with(false, func(cmd *cobra.Command, _ []string, r *local.Runner) error {
			h, s, err := r.Hands()
			if err != nil {
				return runnerError(err)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			if err := mcpserver.Serve(ctx, s, h); err != nil {
				return exitcode.Usagef("mcp: %v", err)
			}
			return nil
		}),
	}
}
