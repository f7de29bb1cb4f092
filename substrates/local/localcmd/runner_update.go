package localcmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/stepsrun"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// newRunnerUpdate is runner update: a status transition, an ask resolved, an approval or an
// elicitation answered, or a new token for the code flow's ask.
func newRunnerUpdate(f *runnerFlags) *cobra.Command {
	var p ir.Patch
	var status string
	var approve, deny, confirm bool
	var answer string
	var newToken bool
	cmd := &cobra.Command{
		Use:   "update ID --status S [--token T] [--evidence E] | --token T --approve|--deny|--answer TEXT [--evidence E] | --new-token",
		Short: "Pause or resume an agent, resolve a person's ask, or answer a workflow's approval",
		Long: `update applies a status transition. An agent session can be paused (STOP to its process
group) and resumed (--status running); it ends by itself, done only when its process exits 0
with a verified result. A person's ask becomes done (or failed: declined) only with its one-time
--token and --evidence naming the verified act; without them nothing changes. --status
cancelled is cancel.

A workflow playbook's session waiting at an approval step (paused, list shows what it waits
for) is answered with the resume token written to its log: --approve continues the workflow
after the approval step (no completed step runs again), --deny cancels the session with no
further side effect. An agent's capsule playbook session held to human-sign-off waits the same
way once its agent succeeded: --approve signs it off (done), --deny fails it. A wrong or used
token changes nothing:

  autonomy runner update 9-k3qa --token rt_… --approve --evidence "checked the preview"

A step playbook's session waiting at an @elicit (list shows the question) is answered the same
way: --answer TEXT for an input or a select (one of its options), --approve (yes) or --deny (no)
for a confirm. The run continues after it; an answer that does not fit is refused and the token
stays valid:

  autonomy runner update 9-k3qa --token rt_… --answer blog

A typed ask (launch --type) is resolved the same way, handing back what its type asks: --choice
one of its options (an approval's follows --status: done approves, failed rejects), --reply its
out (a consult needs one). An inform is only confirmed: --status done with its token, no
--evidence needed. --confirm with --token records that you received an ask without resolving
it (the token stays valid). get shows the handoff: what came back, who resolved it (as the
runner verified them) and who confirmed receipt.

The code flow's asks (a person reviewing a proposal, a maintainer approving a change to
human-required paths) are the operator's alone: their token is written nowhere, and --new-token,
run by the operator outside every session, prints a fresh one-time token for the ask (the one
before no longer redeems it). A process inside a session is refused both.`,
		Example: `  autonomy runner update 7-k3qa --status paused
  autonomy runner update 8-k3qa --status done --token atk_… --evidence "approved in #42 (comment 991)"
  autonomy runner update 8-k3qa --status done --token atk_… --choice B --evidence "B needs no migration"`,
		Args: cobra.ExactArgs(1),
		RunE: f.with(false, func(cmd *cobra.Command, args []string, r *local.Runner) error {
			if newToken {
				if status != "" || approve || deny || confirm || cmd.Flags().Changed("answer") || p.Token != "" || p.Evidence != "" || p.Choice != "" || p.Answer != "" {
					return exitcode.Usagef("--new-token takes no other flag: it prints a token; resolve the ask with it afterwards")
				}
				token, err := r.NewAskToken(cmd.Context(), args[0])
				if err != nil {
					return runnerError(err)
				}
				fmt.Fprintln(cmd.OutOrStdout(), token)
				return nil
			}
			if approve || deny || cmd.Flags().Changed("answer") {
				if approve && deny || (approve || deny) && cmd.Flags().Changed("answer") || status != "" || p.Token == "" {
					return exitcode.Usagef("answer an approval with --token T and one of --approve or --deny, an elicitation with --token T and --answer TEXT (no --status)")
				}
				// The session continues under a supervisor this command starts, with this
				// environment (Respond refuses where a launch would be): a model key missing
				// here is said as a launch says it.
				s, err := r.Respond(cmd.Context(), args[0], p.Token, stepsrun.Answer{Text: answer, Approve: approve, Deny: deny}, p.Evidence)
				if err != nil {
					return runnerError(err)
				}
				if s.Status == ir.Running {
					if warn := r.NoModelCredential(s.Actor); warn != "" {
						fmt.Fprintln(cmd.ErrOrStderr(), "autonomy: warning:", warn, "(the session continues with this command's environment)")
					}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", s.ID, s.Status)
				return nil
			}
			if confirm {
				return confirmAsk(cmd, r, args[0], p, status)
			}
			if status == "" {
				return exitcode.Usagef("give --status S, or --token T with --approve or --deny")
			}
			p.Status = ir.SessionStatus(status)
			valid := false
			for _, s := range ir.SessionStatuses {
				valid = valid || s == p.Status
			}
			if !valid {
				return exitcode.Usagef("--status %q: one of running, paused, cancelled, done, failed", status)
			}
			s, err := r.Update(cmd.Context(), args[0], p)
			if err != nil {
				return runnerError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", s.ID, s.Status)
			return nil
		}),
	}
	cmd.Flags().StringVar(&status, "status", "", "running, paused, cancelled, done or failed")
	cmd.Flags().StringVar(&p.Token, "token", "", "a person's ask: the redeem token its launch printed")
	cmd.Flags().StringVar(&p.Evidence, "evidence", "", "a person's ask: the verified act that resolved it; an approval: why")
	cmd.Flags().BoolVar(&approve, "approve", false, "a workflow's approval: continue it (with --token)")
	cmd.Flags().BoolVar(&deny, "deny", false, "a workflow's approval: cancel it (with --token); a step playbook's confirm: no")
	cmd.Flags().StringVar(&answer, "answer", "", "a step playbook's elicitation: the answer (with --token)")
	cmd.Flags().StringVar(&p.Choice, "choice", "", "a typed ask: the decision option chosen (approve: follows --status)")
	cmd.Flags().StringVar(&p.Answer, "reply", "", "a typed ask: what you hand back (its out; a consult needs it)")
	cmd.Flags().BoolVar(&confirm, "confirm", false, "a typed ask: confirm you received it (with --token), without resolving it")
	cmd.Flags().BoolVar(&newToken, "new-token", false, "an ask only the operator can answer (the code flow's; on kubernetes, any): print a new one-time token for it (the operator's only)")
	return cmd
}
