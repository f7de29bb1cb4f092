package ghcmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/substrates/ghactions/control"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// untrustedLog writes text someone else wrote (an ask's situation, a question built from a
// report) to a job's log with GitHub's workflow commands turned off around it, under a token
// nobody can guess, so that no line of it is taken for ::add-mask::, ::error:: or
// ::stop-commands::.
func untrustedLog(w io.Writer, text string) error {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return err
	}
	stop := "autonomy-" + hex.EncodeToString(raw[:])
	_, err := fmt.Fprintf(w, "::stop-commands::%s\n%s::%s::\n", stop, text, stop)
	return err
}

// ghControlVerbs are the verbs of the control workflow and of a human actor's engage job: they
// read the comment or the ask from the job's environment, never from their arguments.
func ghControlVerbs() []*cobra.Command {
	engage := &cobra.Command{
		Use:   "engage",
		Short: "Post a human actor's ask on its work item, assign and mention the maintainers",
		Long: `Reads AUTONOMY_ACTOR, AUTONOMY_SUBJECT (the work item number), AUTONOMY_ASK (the situation
the launcher sent) and AUTONOMY_BEHAVIOR (the task spec). Without a work item the ask goes to
the run's log only.`,
		Example: `  GITHUB_REPOSITORY=o/r GH_TOKEN=… AUTONOMY_POLICY=.autonomy/policy.json AUTONOMY_ACTOR=maintainer AUTONOMY_SUBJECT=42 AUTONOMY_ASK="May the release go out today?" AUTONOMY_BEHAVIOR=.autonomy/humans/maintainer/SKILL.md autonomy gh engage`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := effect.FromEnv(os.Getenv, cmd.OutOrStdout())
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			spec := ""
			if p := os.Getenv("AUTONOMY_BEHAVIOR"); p != "" {
				if data, err := os.ReadFile(p); err == nil {
					spec = string(data)
				}
			}
			n, err := strconv.Atoi(e.Subject)
			if err != nil || n < 1 {
				cmd.Printf("%s: no work item (subject.ref is %q): the ask is in this log only\n", e.Actor, e.Subject)
				return untrustedLog(cmd.OutOrStdout(), os.Getenv("AUTONOMY_ASK")+"\n"+spec+"\n")
			}
			_, err = effect.Engage(context.Background(), e, e.Actor, n, os.Getenv("AUTONOMY_ASK"), spec)
			return effectError(err)
		},
	}
	ctl := &cobra.Command{
		Use:   "control",
		Short: "Answer an /agent command from the comment that fired the control workflow",
		Long: `Reads the comment from AUTONOMY_COMMENT, AUTONOMY_COMMENT_ID, AUTONOMY_COMMENT_URL,
AUTONOMY_ITEM, AUTONOMY_BY and AUTONOMY_ASSOCIATION, and the fleet from AUTONOMY_ACTORS,
AUTONOMY_COMMANDED, AUTONOMY_ROLES and AUTONOMY_ELICITS (space-separated). The resolution of a
step playbook's elicitation dispatches its actor's workflow to resume the run. Exit 1 when the command was refused
(the reply on the item says why).`,
		Example: `  GITHUB_REPOSITORY=o/r GH_TOKEN=… AUTONOMY_POLICY=.autonomy/policy.json AUTONOMY_ITEM=42 AUTONOMY_COMMENT="/agent status" AUTONOMY_BY=ada AUTONOMY_ASSOCIATION=OWNER AUTONOMY_ACTORS="pm draft develop reviewer planner strategist maintainer" AUTONOMY_ROLES="OWNER MEMBER" autonomy gh control`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := effect.FromEnv(os.Getenv, cmd.OutOrStdout())
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			item, err := strconv.Atoi(os.Getenv("AUTONOMY_ITEM"))
			if err != nil {
				return exitcode.Usagef("AUTONOMY_ITEM is %q, want the item's number", os.Getenv("AUTONOMY_ITEM"))
			}
			id, _ := strconv.ParseInt(os.Getenv("AUTONOMY_COMMENT_ID"), 10, 64)
			ev := control.Event{Body: os.Getenv("AUTONOMY_COMMENT"), CommentID: id, CommentURL: os.Getenv("AUTONOMY_COMMENT_URL"),
				Item: item, Author: os.Getenv("AUTONOMY_BY"), Association: os.Getenv("AUTONOMY_ASSOCIATION")}
			f := control.Fleet{Actors: strings.Fields(os.Getenv("AUTONOMY_ACTORS")), Commanded: strings.Fields(os.Getenv("AUTONOMY_COMMANDED")),
				Roles: strings.Fields(os.Getenv("AUTONOMY_ROLES")), Elicits: strings.Fields(os.Getenv("AUTONOMY_ELICITS"))}
			_, err = control.Handle(context.Background(), e, f, ev)
			return effectError(err)
		},
	}
	sweep := &cobra.Command{
		Use:   "sweep",
		Short: "Escalate the human asks left unresolved past policy.box.human.sla_minutes",
		Long: `What the control workflow's sweep job runs on its schedule: every open ask whose last
notification is older than policy.box.human.sla_minutes (60 when unset) is escalated to the
next maintainer, with a comment on its item; an ask on a paused item waits.`,
		Example: `  GITHUB_REPOSITORY=o/r GH_TOKEN=… AUTONOMY_POLICY=.autonomy/policy.json autonomy gh sweep`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := effect.FromEnv(os.Getenv, cmd.OutOrStdout())
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			_, err = effect.Sweep(context.Background(), e)
			return effectError(err)
		},
	}
	paused := &cobra.Command{
		Use:   "paused",
		Short: "Fail an agent job whose work item is paused, before its model starts",
		Long: `Runs in the agent job of an actor with a work item, after the checkout: reads the item's
number from AUTONOMY_SUBJECT and the pause label from AUTONOMY_POLICY
(policy.box.gh-actions.paused_label, default ` + effect.DefaultPausedLabel + `), and exits 1 when the
item carries the label (a dispatched run's payload has no labels, so the job's condition cannot
see it). No item (AUTONOMY_SUBJECT empty or not a number): exit 0. The token needs issues: read.`,
		Example: `  GITHUB_REPOSITORY=o/r GH_TOKEN=… AUTONOMY_POLICY=.autonomy/policy.json AUTONOMY_SUBJECT=42 autonomy gh paused`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := effect.FromEnv(os.Getenv, cmd.OutOrStdout())
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			paused, err := e.SubjectPaused(context.Background())
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			if paused {
				return &exitcode.Error{Code: exitcode.Problems, Msg: "the work item #" + e.Subject + " is paused: this run does nothing"}
			}
			return nil
		},
	}
	return []*cobra.Command{engage, ctl, sweep, paused}
}
