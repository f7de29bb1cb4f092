package main

import (
	"context"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/conformance"
	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

func newConformance() *cobra.Command {
	var substrate, repo, format string
	cmd := &cobra.Command{
		Use:   "conformance [--target T] [--repo OWNER/NAME] [--format text|markdown|json]",
		Short: "Prove the substrates: probe their runners and verify their support matrix",
		Long: `conformance runs the battery. Each runner is probed for real through the Runner contract,
every check on a fresh installation of the probe fleet (conformance/probe): the core checks every
runner must pass (launch, distinct ids, params verbatim, list, cancel, a cron trigger firing at its
minute on a fake clock) and the expanded ones it may support (get, pause and resume,
maxConcurrent, timeout, isolation, params in the process's env, each param source reaching the
process, a session's launch carrying NONE and refused when it forges who fired it, a scoped
agent:launch refused outside its scope, the agent verbs refused without their capabilities, a
result schema deciding done, capabilities told to the process, the prelaunch, the merge boundary, the human seam). Then every catalog entry × every
substrate: the substrate's own declaration (supported, partial, unsupported, with its realization
in one line), verified by compiling a probe profile per feature, and by the checks that observed
it behave on that substrate's runners; a cell no check observed is marked declared only.

The local exec and human runners run in this process, in temporary installations. The GitHub
runner runs only with --repo: it dispatches the probe fleet's workflows there (compile
conformance/probe for gh-actions and push it to the default branch first), with the token in
GITHUB_TOKEN or GH_TOKEN (actions: write). A session's launch there is applied by its run's
apply job, which this binary runs; with a workflow job's GITHUB_TOKEN (actions: write) in
AUTONOMY_PROBE_JOB_TOKEN it dispatches as github-actions[bot], as on GitHub, and the
session-sources check is observed (not probed without it). Its merge-boundary check also
needs AUTONOMY_REMOTE, the repository's git URL (one git can push to), and the repository
provisioned (autonomy provision conformance/probe --repo OWNER/NAME) with a maintainer: it plays
the proposer's and the reviewer's runs with this autonomy, pushing to that URL; without
AUTONOMY_REMOTE it is not probed.

Exit codes: 0 all core checks passed and every declaration was verified, 1 otherwise, 2 usage
error.`,
		Example: `  autonomy conformance
  autonomy conformance --target local --format json
  autonomy conformance --format markdown > docs/conformance.md
  GITHUB_TOKEN=… autonomy conformance --target gh-actions --repo my-org/fleet-probe`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "markdown", "json"); err != nil {
				return err
			}
			subs := registry.All()
			if substrate != "" {
				s, ok := registry.Lookup(substrate)
				if !ok {
					return usageError("unknown target %q (available: %s)", substrate, strings.Join(registry.Names(), ", "))
				}
				subs = []substrates.Substrate{s}
			}
			targets, err := conformanceTargets(subs, repo)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			stopProgress := cliout.Progress(cmd.ErrOrStderr(), "conformance: running the battery", cliout.ProgressAfter, time.Second)
			rep, err := runConformance(ctx, subs, targets)
			stopProgress()
			if err != nil {
				return usageError("%v", err)
			}
			out := cmd.OutOrStdout()
			switch format {
			case "json":
				err = writeJSON(out, rep)
			case "markdown":
				err = rep.Markdown(out)
			default:
				err = rep.Text(out)
			}
			if err != nil {
				return usageError("%v", err)
			}
			if rep.Failed() {
				return &exitError{Code: exitProblems}
			}
			return nil
		},
	}
	targetFlag(cmd.Flags(), &substrate, "", "only this substrate (default: every registered one)")
	cmd.Flags().StringVar(&repo, "repo", "", "probe the GitHub runner against this repository (OWNER/NAME)")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, markdown or json")
	return cmd
}

// conformanceTargets lists the runners of the chosen substrates; --repo needs one of them to
// have a runner probed against a repository.
func conformanceTargets(subs []substrates.Substrate, repo string) ([]conformance.Target, error) {
	exe, _ := os.Executable() // none: a runner reads sessions back in this process
	targets, err := conformance.Targets(subs, repo, exe)
	if err != nil {
		return nil, usageError("%v", err)
	}
	if repo != "" && !slices.ContainsFunc(targets, func(t conformance.Target) bool { return t.Remote }) {
		return nil, usageError("--repo probes a runner against a repository, which none of %s has: drop --target", strings.Join(names(subs), ", "))
	}
	return targets, nil
}

// runConformance runs the battery and the matrix.
func runConformance(ctx context.Context, subs []substrates.Substrate, targets []conformance.Target) (conformance.Report, error) {
	results := conformance.Run(ctx, targets)
	scratch, err := os.MkdirTemp("", "autonomy-matrix-")
	if err != nil {
		return conformance.Report{}, err
	}
	defer os.RemoveAll(scratch)
	cells, err := conformance.Matrix(subs, scratch)
	if err != nil {
		return conformance.Report{}, err
	}
	return conformance.NewReport(subs, targets, results, cells), nil
}

func names(subs []substrates.Substrate) []string {
	out := make([]string, len(subs))
	for i, s := range subs {
		out[i] = s.Name()
	}
	return out
}
