package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/modelfake"
)

// newDev is the group of commands for trying autonomy out.
func newDev() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Tools for trying a fleet out on this machine (a scripted model endpoint)",
		Long: `dev holds tools for trying a fleet out without any account: model serves a scripted
model endpoint that the real agent CLIs talk to as they would to a model.`,
		Example: `  autonomy dev model --addr 127.0.0.1:4000`,
	}
	cmd.AddCommand(newDevModel())
	return cmd
}

func newDevModel() *cobra.Command {
	var script, addr, envFile string
	cmd := &cobra.Command{
		Use:   "model [--script FILE] [--addr HOST:PORT] [--env-file FILE]",
		Short: "Serve a scripted model endpoint (OpenAI Responses and Anthropic Messages) on this machine",
		Long: `model serves the scripted model endpoint the tests use, on a loopback address, until it is
interrupted (Ctrl-C or SIGTERM). The pinned agent CLIs (codex, claude) talk to it as to a model:
each agent session plays the script from its first turn, so a local fleet or a playbook runs end
to end offline, with no model account.

It prints the two variables that point the runner at it, one a line:

  OPENAI_BASE_URL=http://127.0.0.1:4000/v1
  ANTHROPIC_BASE_URL=http://127.0.0.1:4000

--addr 127.0.0.1:0 picks a free port (the printed lines name it). --env-file FILE also writes
the two lines to FILE, whole, before printing them, and removes it on exit: another terminal can
load them with export $(cat FILE) as soon as the file exists.

Run the runner with them and any non-empty OPENAI_API_KEY (or ANTHROPIC_API_KEY): the runner's
model proxy forwards the session's requests here. stderr gets one line per model request.

The script (--script FILE, YAML or JSON) is a list of turns, each one of:

  - shell: COMMAND      ask the CLI to run COMMAND with its shell tool; the next turn is
                        played when the command's output comes back
  - tool: NAME          call another tool the CLI offers (an MCP tool: the name, or its
    args: {...}         last part after "__"), with args
  - text: ANSWER        the final answer (last turn only)
  - json: VALUE         the final structured result, for an actor with result.schema
                        (last turn only)

Without --script it answers every session with one final text: a result of the default
contract (autonomy.result.v1), status done, whose summary says that no model was asked and
nothing was done. (An actor with another result contract then ends failed: script it.)

Exit codes: 0 stopped by a signal, 1 a session broke the script (it ran out, or a tool result
was missing: each is printed as it happens), 2 usage error (a bad script, named file:line:col;
an address that is not loopback, or in use).`,
		Example: `  autonomy dev model --script trial.yml --addr 127.0.0.1:4000
  autonomy dev model --addr 127.0.0.1:0
  autonomy dev model --script trial.yml --addr 127.0.0.1:0 --env-file model.env`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			turns, what := modelfake.DefaultScript, "the default one-answer script"
			if script != "" {
				var err error
				if turns, err = modelfake.ReadScript(script); err != nil {
					return usageError("%v", err)
				}
				what = fmt.Sprintf("%s (%s)", script, count(len(turns), "turn"))
			}
			errOut := cmd.ErrOrStderr()
			var mu sync.Mutex // the server logs from its handlers' goroutines
			logLine := func(line string) {
				mu.Lock()
				defer mu.Unlock()
				fmt.Fprintln(errOut, "autonomy dev model:", line)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP) // SIGHUP: its terminal closed
			defer stop()
			srv, err := modelfake.Listen(addr, turns, logLine)
			if errors.Is(err, syscall.EADDRINUSE) {
				return usageError("%v: another program (another autonomy dev model?) listens there; --addr 127.0.0.1:0 picks a free port, and --env-file FILE writes the variables that point at it", err)
			}
			if err != nil {
				return usageError("%v", err)
			}
			defer srv.Close()
			if envFile != "" {
				if err := srv.WriteEnvFile(envFile); err != nil {
					return usageError("--env-file: %v", err)
				}
				defer func() { _ = srv.RemoveEnvFile(envFile) }() // unless gone already, or another's now
			}
			fmt.Fprint(cmd.OutOrStdout(), srv.Env())
			logLine(fmt.Sprintf("serving %s on %s; Ctrl-C stops it", what, srv.URL()))
			<-ctx.Done()
			srv.Close()
			if err := srv.Err(); err != nil {
				return &exitError{Code: exitProblems, Msg: "a session broke the script (see above)"}
			}
			logLine("stopped")
			return nil
		},
	}
	cmd.Flags().StringVar(&script, "script", "", "the script file: a YAML list of turns (shell:, tool:, text:, json:); default: one final result saying nothing was done")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:4000", "the loopback address to listen on (port 0 picks a free one)")
	cmd.Flags().StringVar(&envFile, "env-file", "", "also write the printed KEY=VALUE lines to this file once serving (removed on exit; refused while another dev model serves the one there)")
	return cmd
}
