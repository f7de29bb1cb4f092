package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/playbook/engine"
)

// Where a compiled gh-actions job hands `autonomy playbook step` its step and its data.
const (
	playbookStepEnv = "AUTONOMY_PLAYBOOK_STEP"
	playbookDataEnv = "AUTONOMY_PLAYBOOK_DATA"
)

// runnerFiles are the GitHub runner's command files: a step's command never gets them, so it
// cannot set the variables, path or outputs of the steps after it.
var runnerFiles = []string{"GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_STATE"}

func newPlaybookStep() *cobra.Command {
	var dataFile, workspace string
	cmd := &cobra.Command{
		Use:   "step --data FILE",
		Short: "Run one step of a workflow playbook compiled into a GitHub Actions job",
		Long: `step runs the one workflow-playbook step described by the JSON in $` + playbookStepEnv + `
(written by autonomy compile for gh-actions) over the data of the steps before it, kept in
--data FILE (or, in the first step of a job, handed from the job before in $` + playbookDataEnv + `).
The command's argv was split at compile time and is exec'd directly, never through a shell;
references ($id.stdout, $id.json, $id.approved, $args.NAME) are substituted per word. A step
whose condition is false is recorded as skipped. The step's record is printed as one JSON line;
when $GITHUB_OUTPUT is set the run's data is written to it as the output "data" (gzipped JSON in
base64, at most 900 KiB), for the next job.

Exit codes: 0 the step ran (or was skipped), 1 the step failed, 2 usage or I/O error.`,
		Example: `  AUTONOMY_PLAYBOOK_STEP='{"id":"changes","namespace":"cli","argv":["git","log","--oneline","-n","20"],"args":{"VERSION":"v0.0.0-dev"},"steps":["changes","summary","approve","tag","report"]}' autonomy playbook step --data data.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkIntFlags(cmd); err != nil {
				return err
			}
			raw := os.Getenv(playbookStepEnv)
			if raw == "" {
				return usageError("$%s is not set: this command runs a step of a compiled gh-actions workflow", playbookStepEnv)
			}
			var spec engine.StepSpec
			if err := json.Unmarshal([]byte(raw), &spec); err != nil {
				return usageError("$%s is not a step: %v", playbookStepEnv, err)
			}
			d, err := engine.ReadDataFile(dataFile, os.Getenv(playbookDataEnv))
			if err != nil {
				return usageError("%v", err)
			}
			var env []string
			for _, kv := range os.Environ() {
				name, _, _ := strings.Cut(kv, "=")
				if !contains(runnerFiles, name) && name != playbookStepEnv && name != playbookDataEnv {
					env = append(env, kv)
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			e := &engine.Engine{Env: env}
			res, runErr := e.RunStep(ctx, spec, d, workspace, nil)
			if err := engine.WriteDataFile(dataFile, d); err != nil {
				return usageError("%v", err)
			}
			line, _ := json.Marshal(res)
			fmt.Fprintln(cmd.OutOrStdout(), string(line))
			if sum := os.Getenv("GITHUB_STEP_SUMMARY"); sum != "" {
				if err := appendFile(sum, stepSummary(res)); err != nil {
					return usageError("%v", err)
				}
			}
			if out := os.Getenv("GITHUB_OUTPUT"); out != "" && runErr == nil {
				enc, err := engine.EncodeData(d)
				if err != nil {
					return &exitError{Code: exitProblems, Msg: err.Error()}
				}
				if err := appendFile(out, "data="+enc+"\n"); err != nil {
					return usageError("%v", err)
				}
			}
			if runErr != nil {
				return &exitError{Code: exitProblems, Msg: runErr.Error()}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataFile, "data", "", "the file the steps of this job keep their data in")
	f.StringVar(&workspace, "workspace", ".", "the directory no step may leave")
	_ = cmd.MarkFlagRequired("data")
	return cmd
}

// appendFile appends text to the regular file name (a runner's command file); a FIFO or a
// device is refused, not waited on.
func appendFile(name, text string) error { return playbook.WriteRegular(name, []byte(text), true) }

// stepSummary is a step's record for the job summary: what a reviewer reads before approving
// the next gate. The output is capped and fenced by a run of backticks longer than any in it.
func stepSummary(r engine.StepResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### step `%s`: %s\n\n", strings.ReplaceAll(r.ID, "`", ""), r.Status)
	if r.Reason != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.ReplaceAll(r.Reason, "\n", " "))
	}
	out := r.Stdout
	if len(out) > engine.PreviewBytes {
		out = out[:engine.PreviewBytes] + "\n… (capped)"
	}
	if out != "" {
		fence := "```"
		for strings.Contains(out, fence) {
			fence += "`"
		}
		fmt.Fprintf(&b, "%s\n%s\n%s\n\n", fence, strings.TrimRight(out, "\n"), fence)
	}
	return b.String()
}
