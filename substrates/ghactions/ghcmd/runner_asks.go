package ghcmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
)

// cancel stops a run of the fleet, or retracts an open ask: "ask:TOKEN", or the run id of the
// human actor's run that posted it (that run has completed; its session runs while the ask is
// open). Either needs agent:cancel for the session's actor.
func cancel(ctx context.Context, call substrates.RunnerCall, r *ghrun.JobRunner) error {
	id := call.Args[0]
	ok := false
	if !strings.HasPrefix(id, "ask:") {
		var err error
		if ok, err = r.Cancel(ctx, id); err != nil {
			return ghRunnerError(err)
		}
	}
	if !ok {
		a, g, err := openAsk(ctx, call, r, id, "cancel")
		if err != nil {
			return err
		}
		if a == nil {
			return exitcode.Problemf("session %s: no run of the fleet in flight, nor an open ask, to cancel (unknown, or already ended)", id)
		}
		if err := effect.Retract(ctx, g.h.Env, a, callerName(r)); err != nil {
			return ghRunnerError(err)
		}
	}
	fmt.Fprintf(call.Out, "%s cancelled\n", id)
	return nil
}

// update resolves an open ask with its token and the evidence of the maintainer's command that
// resolved it (the comment's URL or id), as the local runner resolves a person's ask with its
// token and evidence; --status is done (approve, answer) or failed (reject), or given by the
// command. GitHub cannot pause or resume a run; --status cancelled is cancel.
func update(ctx context.Context, call substrates.RunnerCall, r *ghrun.JobRunner) error {
	id := call.Args[0]
	switch call.Status {
	case "cancelled":
		return cancel(ctx, call, r)
	case "", "done", "failed":
	default:
		return exitcode.Usagef("update --status %s: not on gh-actions, which cannot pause or resume a run; resolve an ask with --token T --evidence COMMENT (--status done or failed), or cancel", call.Status)
	}
	if call.Token == "" || call.Evidence == "" {
		return exitcode.Usagef("update %s: give the ask's --token and --evidence naming the maintainer's command that resolved it (its comment's URL or id)", id)
	}
	a, g, err := openAsk(ctx, call, r, id, "update")
	if err != nil {
		return err
	}
	if a == nil {
		return exitcode.Problemf("session %s: no open ask to resolve (unknown, or already resolved)", id)
	}
	res, err := effect.ResolveWithEvidence(ctx, g.h.Env, a, call.Token, call.Evidence, call.Status)
	if err != nil {
		return ghRunnerError(err)
	}
	status := ir.Done
	if res.Resolved == "reject" {
		status = ir.Failed
	}
	fmt.Fprintf(call.Out, "%s %s\n", id, status)
	return nil
}

// openAsk finds the open ask id names, and checks the caller may act on its actor's sessions.
func openAsk(ctx context.Context, call substrates.RunnerCall, r *ghrun.JobRunner, id, verb string) (*effect.Ask, *ghSessions, error) {
	g, err := newGHSessions(r, call.Dir)
	if err != nil {
		return nil, nil, ghRunnerError(err)
	}
	if g.h == nil {
		return nil, g, nil
	}
	a, err := effect.FindOpenAsk(ctx, g.h.Env, id)
	if err != nil {
		return nil, g, ghRunnerError(err)
	}
	if a == nil {
		return nil, g, nil
	}
	if err := r.Authorize(verb, a.Actor); err != nil {
		return nil, g, ghRunnerError(err)
	}
	return a, g, nil
}

// callerName is who the retraction names: the calling actor, or the operator.
func callerName(r *ghrun.JobRunner) string {
	if r.Caller != nil {
		if name, err := strconv.Unquote(strings.TrimPrefix(r.Caller.Who, "actor ")); err == nil {
			return name
		}
	}
	return "operator"
}
