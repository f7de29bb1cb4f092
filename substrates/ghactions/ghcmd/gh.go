package ghcmd

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// newGH is the verbs the trusted jobs of a gh-actions installation run. They read the job's
// environment as the generated workflow sets it; they are not meant to be run by hand.
func newGH() *cobra.Command {
	gh := &cobra.Command{
		Use:   "gh",
		Short: "What the trusted jobs of a gh-actions installation run (propose, review, gate, engage, control, sweep, paused, ask, resume, mcp, apply)",
		Long: `The generated workflows run these in the jobs that follow an agent's job: the agent's job
runs the model without the power to move or bless code, and exports its commits or its verdict;
these verbs read that output as data and act with their own job's token. They read
GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_SERVER_URL, GITHUB_RUN_ID, GH_TOKEN and the
AUTONOMY_* variables the workflow sets (AUTONOMY_REMOTE overrides the git URL pushed to;
AUTONOMY_NOW, an RFC 3339 time, fixes the clock engage and sweep read, for tests).
See docs/gh-actions.md.

Exit codes: 0 done (or nothing to do, a stale verdict discarded, the pull-request cap reached),
1 refused (said on the work item or pull request; by gate, in the job's annotation), 2 usage, I/O
or GitHub error.`,
		Example: `  GITHUB_REPOSITORY=o/r GH_TOKEN=… AUTONOMY_POLICY=.autonomy/policy.json AUTONOMY_SUBJECT=42 autonomy gh paused`,
	}
	var bundle, verdict string
	propose := &cobra.Command{
		Use:     "propose --bundle FILE",
		Short:   "Open or update the pull request of an agent's commits, after checking them",
		Example: `  GITHUB_REPOSITORY=o/r GH_TOKEN=… AUTONOMY_POLICY=.autonomy/policy.json AUTONOMY_ACTOR=develop AUTONOMY_SUBJECT=42 AUTONOMY_HUMAN_REQUIRED_PATHS=.autonomy/human-required-paths.json AUTONOMY_REVIEWER_WORKFLOW=reviewer.yml AUTONOMY_REVIEWER_REF_INPUT=PR autonomy gh propose --bundle commits.bundle`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := effect.FromEnv(os.Getenv, cmd.OutOrStdout())
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			_, err = effect.Propose(context.Background(), e, bundle)
			return effectError(err)
		},
	}
	propose.Flags().StringVar(&bundle, "bundle", "", "the git bundle of the agent's commits (absent: nothing to propose)")
	_ = propose.MarkFlagRequired("bundle")
	review := &cobra.Command{
		Use:     "review --verdict FILE",
		Short:   "Post the agent-review status of a verdict on the head it names",
		Example: `  GITHUB_REPOSITORY=o/r GH_TOKEN=… AUTONOMY_POLICY=.autonomy/policy.json AUTONOMY_SUBJECT=51 AUTONOMY_RESULT_SCHEMA=.autonomy/results/autonomy.review.v1.json autonomy gh review --verdict verdict.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := effect.FromEnv(os.Getenv, cmd.OutOrStdout())
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			_, err = effect.Review(context.Background(), e, verdict)
			return effectError(err)
		},
	}
	review.Flags().StringVar(&verdict, "verdict", "", "the reviewer's verdict file")
	_ = review.MarkFlagRequired("verdict")
	gate := &cobra.Command{
		Use:   "gate",
		Short: "Prove the approval of the environment gating this job, or fail it",
		Long: `Runs first in each approval job of a compiled workflow playbook. Reads the environment's name
from AUTONOMY_ENVIRONMENT and refuses (exit 1) unless the environment has required reviewers and
the review history of this run (GITHUB_RUN_ID) holds an approval of it: GitHub creates a job's
missing environment unprotected, and the job must not then run unapproved. The token needs
actions: read.`,
		Example: `  GITHUB_REPOSITORY=o/r GH_TOKEN=… GITHUB_RUN_ID=… AUTONOMY_ENVIRONMENT=autonomy-releaser-approve autonomy gh gate`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			name := os.Getenv("AUTONOMY_ENVIRONMENT")
			if name == "" {
				return exitcode.Usagef("AUTONOMY_ENVIRONMENT is not set: it names the environment gating this job")
			}
			e, err := effect.FromEnv(os.Getenv, cmd.OutOrStdout())
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			err = effect.Gate(context.Background(), e, name)
			var r *effect.Refused
			if errors.As(err, &r) {
				// A workflow command: the refusal is the run's annotation, not only a log line.
				fmt.Fprintf(cmd.OutOrStdout(), "::error title=approval gate::%s\n", r.Reason)
			}
			return effectError(err)
		},
	}
	humanGate := &cobra.Command{
		Use:   "human-gate",
		Short: "Post the human-approval status of a pull request's head",
		Long: `Runs in the control workflow on a pull request's events (pull_request_target) and on a
submitted review (pull_request_review). Reads the pull request's number from AUTONOMY_SUBJECT,
policy.box.risk.human_required_paths from AUTONOMY_HUMAN_REQUIRED_PATHS and the maintainers
from the policy. Posts human-approval: success on the head when a maintainer's latest review
approves that very commit; on a head with no human-approval status yet, success when no changed
path is human-required, else pending. It never turns a posted status into success without a
maintainer's approval. The token needs pull-requests: read and statuses: write.`,
		Example: `  GITHUB_REPOSITORY=o/r GH_TOKEN=… AUTONOMY_POLICY=.autonomy/policy.json AUTONOMY_SUBJECT=51 AUTONOMY_HUMAN_REQUIRED_PATHS=.autonomy/human-required-paths.json autonomy gh human-gate`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := effect.FromEnv(os.Getenv, cmd.OutOrStdout())
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			_, err = effect.CheckHumanGate(context.Background(), e)
			return effectError(err)
		},
	}
	gh.AddCommand(propose, review, gate, humanGate)
	gh.AddCommand(ghControlVerbs()...)
	gh.AddCommand(ghStepsVerbs()...)
	gh.AddCommand(ghSafeOutputVerbs()...)
	gh.AddCommand(ghShimVerb())
	gh.AddCommand(ghModelVerbs()...)
	gh.AddCommand(ghJailVerb())
	return gh
}

// effectError maps a refusal to exit 1 and anything else to exit 2.
func effectError(err error) error {
	if err == nil {
		return nil
	}
	var r *effect.Refused
	if errors.As(err, &r) {
		return &exitcode.Error{Code: exitcode.Problems, Msg: r.Reason}
	}
	return exitcode.Usagef("%v", err)
}
