package localcmd

import (
	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// newRunnerSession is `runner --target kubernetes session`: the entry point a session's
// container runs (substrates/kubernetes/session.go). The local runner starts its sessions
// itself, so it has no such verb.
func newRunnerSession(f *runnerFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "session",
		Short: "Run the session of this pod (--target kubernetes: a session container's entry point)",
		Long: `session is what every session's container of a Kubernetes fleet runs (its PodTemplate's
args): it reads the session from the env the PodTemplate and the Job set (AUTONOMY_SESSION,
AUTONOMY_ACTOR, AUTONOMY_FORWARD, AUTONOMY_DIR, AUTONOMY_TERMINATION_LOG), runs the actor's
script behavior, or its skill with the agent CLI of policy.box.kubernetes.agent (its model
through the fleet's model proxy, its tools from "runner --target kubernetes mcp"), with the
sessions' allowlisted environment and no credential, checks the result against the actor's
result contract, and writes it to the
container's termination message file, where the runner reads it. A missing, invalid or 4 KiB
or longer result, or a failing behavior, writes the reason there instead and exits 1; a
missing variable exits 2. It makes no API call itself. A PodTemplate's container runs it as
"autonomy runner --target kubernetes session". See docs/kubernetes.md.`,
		// A machine's entry point, as runner supervise is: no person runs it, so it is hidden and
		// has no example (cmd/autonomy's jobOnly says so).
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: f.with(false, func(*cobra.Command, []string, *local.Runner) error {
			return exitcode.Usagef("runner session: only --target kubernetes has it (a session container's entry point); the local runner starts its sessions itself")
		}),
	}
}

// newRunnerModelProxy is `runner --target kubernetes model-proxy`: the entry point of the
// model proxy's Deployment (substrates/kubernetes/modelproxy_serve.go).
func newRunnerModelProxy(f *runnerFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "model-proxy",
		Short: "Serve a Kubernetes fleet's model proxy (--target kubernetes: its Deployment's entry point)",
		Long: `model-proxy is what the model proxy's Deployment of a Kubernetes fleet runs: it serves the model
proxy on AUTONOMY_MODEL_LISTEN (":8787" by default) for the API AUTONOMY_MODEL_API (openai or
anthropic), takes requests carrying the placeholder key AUTONOMY_MODEL_KEY (what a skill's session
holds) and forwards them to AUTONOMY_MODEL_UPSTREAM (empty: the public API) with the real
credential AUTONOMY_MODEL_CREDENTIAL in its place, which the Deployment reads from the Secret
policy.box.kubernetes.modelProxy.secret names. It runs until it is stopped (SIGTERM), then prints
the usage. A missing variable exits 2. See docs/kubernetes.md, "The model proxy".`,
		// A machine's entry point, as runner session is: hidden, no example (cmd/autonomy's jobOnly).
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: f.with(false, func(*cobra.Command, []string, *local.Runner) error {
			return exitcode.Usagef("runner model-proxy: only --target kubernetes has it (its model proxy Deployment's entry point); the local runner starts a model proxy per session itself")
		}),
	}
}
