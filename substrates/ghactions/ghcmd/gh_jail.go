package ghcmd

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghproxy"
)

// ghJailVerb runs the agent in its network sandbox.
func ghJailVerb() *cobra.Command {
	return &cobra.Command{
		Use:   "jail -- COMMAND [ARG...]",
		Short: "Run the agent with no network but the model proxy and the egress allowlist",
		Long: `Runs in the agent job's agent step, after gh model-proxy. Runs COMMAND in a network
namespace of its own (bubblewrap, which must be on PATH with socat) into which only these
loopback ports are bridged: the model proxy's (AUTONOMY_MODEL_URL), the GitHub API's when
GITHUB_API_URL is on loopback, and an egress CONNECT proxy this command serves outside. That
proxy admits the hosts AUTONOMY_EGRESS_ALLOW lists (a JSON list, from
policy.box.gh-actions.egress.allow) and the host of GITHUB_API_URL (api.github.com), and refuses
every other host and every private address (a listed IP literal too when AUTONOMY_EGRESS_GUARD
is true). HTTPS_PROXY and the like point COMMAND at it; its decisions are appended to
$RUNNER_TEMP/autonomy-model/egress.jsonl. COMMAND writes its home, /tmp, the checkout, and
of RUNNER_TEMP only AUTONOMY_RESULT, the safe outputs' folder and the folders
AUTONOMY_JAIL_TEMP_WRITE names (a JSON list of folder names: a step playbook's state and
artifacts). Exit codes: COMMAND's own, or 2 when the sandbox
cannot be made. See docs/gh-actions.md#egress. In the example, COMMAND shows two walls of the
jail: the runner's GITHUB_ENV is gone, and RUNNER_TEMP is read-only.`,
		Example: `  RUNNER_TEMP=job AUTONOMY_MODEL_URL=http://127.0.0.1:8089/openai/v1 AUTONOMY_EGRESS_ALLOW='[]' AUTONOMY_EGRESS_GUARD=false autonomy gh jail -- sh -c 'echo "GITHUB_ENV=${GITHUB_ENV:-unset}"; echo forged 2>/dev/null >> "$RUNNER_TEMP/autonomy-model/egress.jsonl" || echo "RUNNER_TEMP is read-only"'`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			code, err := ghproxy.Jail(context.Background(), os.Getenv, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err != nil {
				return exitcode.Usagef("jail: %v", err)
			}
			if code != 0 {
				return &exitcode.Error{Code: code}
			}
			return nil
		},
	}
}
