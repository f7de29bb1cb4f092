package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// runnerVerbs are the verbs `autonomy runner --target kubernetes` offers.
var runnerVerbs = []string{"launch", "get", "list", "cancel", "update", "pause", "resume", "logs", "session", "mcp", "model-proxy"}

// RunVerb runs a runner verb on the fleet installed in the cluster (substrates.RunnerVerbs): as
// the operator, or, inside a session's pod ($AUTONOMY_SESSION set), as its actor, bounded by
// the actor's capabilities here and by its ServiceAccount's Role at the API server.
func runVerb(ctx context.Context, call substrates.RunnerCall) error {
	if !slices.Contains(runnerVerbs, call.Verb) {
		return exitcode.Usagef("runner %s: not on kubernetes, which offers %s (a CronJob is the schedule: no tick or serve)", call.Verb, strings.Join(runnerVerbs, ", "))
	}
	if call.Verb == "list" && call.All {
		return exitcode.Usagef("list --all: not on kubernetes, which lists the sessions in flight (kubectl get jobs -l %s=%s lists every Job)", LabelComponent, ComponentSession)
	}
	switch call.Verb {
	case "session":
		return RunSession(ctx, os.Environ(), call.Out, call.Err) // in a session's pod: no API call (session.go)
	case "mcp":
		return ServeMCP(ctx, os.Environ()) // started by a skill's agent CLI in its pod (session_mcp.go)
	case "model-proxy":
		return ServeModelProxy(ctx, os.Environ(), call.Out) // the model proxy's Deployment (proxy.go)
	}
	cs, ns, err := Connect{Kubeconfig: call.Kubeconfig, Namespace: call.Namespace}.Client()
	if err != nil {
		return exitcode.Usagef("%v", err)
	}
	r, err := OpenRunner(ctx, cs, ns, callerFromEnv())
	if err != nil {
		return runnerError(err)
	}
	return runnerError(r.runVerb(ctx, call))
}

func (r *Runner) runVerb(ctx context.Context, call substrates.RunnerCall) error {
	out := call.Out
	switch call.Verb {
	case "launch":
		if call.Branch != "" {
			return exitcode.Usagef("--branch: not on kubernetes: a session's pod has no worktree of the project")
		}
		s, err := r.LaunchFiring(ctx, call.Args[0], Firing{Ref: call.Ref, Text: call.Text, From: call.From, Kind: call.Kind}, maps.Clone(call.Params))
		if err != nil {
			return err
		}
		if call.Format == "json" {
			return cliout.WriteJSON(out, s)
		}
		fmt.Fprintln(out, s.ID)
		switch {
		case isAskID(s.ID) && r.opts.Caller != nil:
			// From a session's pod: the model never reads a person's token; the operator
			// takes one (NewAskToken).
			fmt.Fprintf(call.Err, "autonomy: the ask %s waits for its person; the operator answers it with a token of their own: autonomy runner --target kubernetes update %s --new-token\n", s.ID, s.ID)
		case s.Token != "":
			fmt.Fprintln(out, s.Token) // a person's ask: its one-time redeem token, shown once
		}
	case "get":
		s, ok, err := r.Get(ctx, call.Args[0])
		if err != nil {
			return err
		}
		if !ok {
			return exitcode.Problemf("no session %s in namespace %s", call.Args[0], r.opts.Namespace)
		}
		if call.Format == "json" {
			return cliout.WriteJSON(out, s)
		}
		substrates.PrintSession(out, s)
	case "list":
		ss, err := r.List(ctx)
		if err != nil {
			return err
		}
		return substrates.PrintSessions(out, call.Format, ss)
	case "cancel":
		return r.transition(ctx, call, ir.Patch{Status: ir.Cancelled})
	case "pause":
		return r.transition(ctx, call, ir.Patch{Status: ir.Paused})
	case "resume":
		return r.transition(ctx, call, ir.Patch{Status: ir.Running})
	case "update":
		if call.NewToken {
			if call.Status != "" || call.Token != "" || call.Evidence != "" {
				return exitcode.Usagef("--new-token takes no other flag: it prints a token; resolve the ask with it afterwards")
			}
			token, err := r.NewAskToken(ctx, call.Args[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(out, token)
			return nil
		}
		return r.transition(ctx, call, ir.Patch{Status: ir.SessionStatus(call.Status), Token: call.Token, Evidence: call.Evidence})
	case "logs":
		return r.Logs(ctx, call.Args[0], call.Follow, out)
	}
	return nil
}

// transition applies p to the session named by the verb's argument, printing what happened.
func (r *Runner) transition(ctx context.Context, call substrates.RunnerCall, p ir.Patch) error {
	id, st := call.Args[0], p.Status
	ok, err := r.Update(ctx, id, p)
	if err != nil {
		return err
	}
	if !ok {
		s, found, err := r.Get(ctx, id)
		switch {
		case err != nil:
			return err
		case !found:
			return exitcode.Problemf("no session %s in namespace %s", id, r.opts.Namespace)
		}
		return exitcode.Problemf("session %s is %s: %s does not apply", id, s.Status, st)
	}
	fmt.Fprintf(call.Out, "%s %s\n", id, st)
	return nil
}

// runnerError maps a runner error to an exit code: a refusal is 1, anything else 2.
func runnerError(err error) error {
	var denied *DeniedError
	var refused *RefusedError
	var coded *exitcode.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &coded):
		return err
	case errors.As(err, &denied):
		return &exitcode.Error{Code: exitcode.Problems, Msg: denied.Error()}
	case errors.As(err, &refused), errors.Is(err, ir.ErrUnsupported):
		return &exitcode.Error{Code: exitcode.Problems, Msg: err.Error()}
	}
	return &exitcode.Error{Code: exitcode.Usage, Msg: err.Error()}
}
