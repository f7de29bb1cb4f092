package main

import (
	"bytes"
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/playbook/engine"
	"github.com/autonomyhq/autonomy/playbook/resume"
	"github.com/autonomyhq/autonomy/playbook/stepsrun"
)

// requestConflicts are the flags of playbook run a JSON request replaces.
var requestConflicts = []string{"pipeline", "args-json", "args-env", "cwd", "timeout-ms", "max-output-bytes"}

// runRequest runs seed 003's JSON run request read from source ("-": stdin): a run or a resume,
// printing its envelope; a request that does not read is an envelope with ok false (error kind
// invalid), so a driving runtime always reads an envelope.
func runRequest(cmd *cobra.Command, source string, nargs int, base engine.Request, statePath string) error {
	if nargs > 0 {
		return usageError("give a FILE or --request, not both")
	}
	for _, name := range requestConflicts {
		if cmd.Flags().Changed(name) {
			return usageError("--%s and --request: the request carries it", name)
		}
	}
	var in io.Reader = cmd.InOrStdin()
	if source != "-" {
		data, err := playbook.ReadRegular(source, engine.MaxRequestBytes)
		if err != nil {
			return usageError("--request: %v", err)
		}
		in = bytes.NewReader(data)
	}
	rr, err := engine.ReadRequest(in)
	if err != nil {
		return printEnvelope(cmd.OutOrStdout(), engine.Envelope{Output: []engine.StepResult{}, Error: &engine.Error{Kind: "invalid", Message: err.Error()}})
	}
	if rr.Action == "resume" {
		req := resume.Request{Token: rr.Token, Answer: stepsrun.Answer{Approve: *rr.Approve, Deny: !*rr.Approve}, Log: cmd.ErrOrStderr()}
		return withStore(cmd, statePath, func(ctx context.Context, st *store.Store) any { return resume.Resume(ctx, st, req) })
	}
	req, err := rr.Engine(base.Workspace)
	if err != nil {
		return printEnvelope(cmd.OutOrStdout(), engine.Envelope{Output: []engine.StepResult{}, Error: &engine.Error{Kind: "invalid", Message: err.Error()}})
	}
	req.Secrets, req.MCPServers, req.CLI, req.Web = base.Secrets, base.MCPServers, base.CLI, base.Web
	return runEngine(cmd, statePath, func(ctx context.Context, e *engine.Engine) engine.Envelope { return e.Run(ctx, req) })
}
