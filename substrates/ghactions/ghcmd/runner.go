package ghcmd

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
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
)

// ghVerbs are the runner verbs the GitHub runner offers from a job.
var ghVerbs = []string{"launch", "get", "list", "cancel", "update", "logs"}

// RunVerb runs a runner verb on the GitHub runner (substrates.RunnerVerbs), from the job's
// environment and the installation in the checkout (call.Dir, else $GITHUB_WORKSPACE, else the
// current directory).
func (Substrate) RunVerb(ctx context.Context, call substrates.RunnerCall) error {
	verb, args := call.Verb, call.Args
	if !slices.Contains(ghVerbs, verb) {
		return exitcode.Usagef("runner %s: not on gh-actions, which offers %s (GitHub cannot pause a run; tick and serve are GitHub's own)", verb, strings.Join(ghVerbs, ", "))
	}
	if verb == "launch" && effect.InModelJob(os.Getenv) {
		return recordLaunch(ctx, call) // gh_shim.go: a model job's launch is an effect
	}
	dir := call.Dir
	r, err := ghrun.NewJobRunner(ghrun.JobOptions{Dir: dir})
	if err != nil {
		return ghRunnerError(err)
	}
	out := call.Out
	switch verb {
	case "launch":
		s, err := launch(ctx, call, r, args[0])
		if err != nil {
			return err
		}
		if call.Format == "json" {
			return cliout.WriteJSON(out, s)
		}
		fmt.Fprintln(out, s.ID)
	case "get":
		g, err := newGHSessions(r, dir)
		if err != nil {
			return ghRunnerError(err)
		}
		s, ok, err := g.Get(ctx, args[0])
		if err != nil {
			return ghRunnerError(err)
		}
		if !ok {
			return exitcode.Problemf("no session %s (a run of the fleet's workflows in %s)", args[0], r.Repo())
		}
		if call.Format == "json" {
			return cliout.WriteJSON(out, s)
		}
		substrates.PrintSession(out, s)
	case "list":
		if call.All {
			return exitcode.Usagef("list --all: not on gh-actions, which lists the sessions in flight (the repository's Actions tab keeps every run)")
		}
		g, err := newGHSessions(r, dir)
		if err != nil {
			return ghRunnerError(err)
		}
		ss, err := g.List(ctx)
		if err != nil {
			return ghRunnerError(err)
		}
		return substrates.PrintSessions(out, call.Format, ss)
	case "cancel":
		return cancel(ctx, call, r)
	case "update":
		return update(ctx, call, r)
	case "logs":
		if err := r.Logs(ctx, args[0], call.Follow, out); err != nil {
			return ghRunnerError(err)
		}
	}
	return nil
}

// ghLaunch launches actor with the params of the flags: --param and --params-json verbatim,
// --ref and --text into the dispatch inputs the actor forwards subject.ref and subject.text as.
func launch(ctx context.Context, call substrates.RunnerCall, r *ghrun.JobRunner, actor string) (ir.Session, error) {
	params := maps.Clone(call.Params)
	if params == nil {
		params = map[string]string{}
	}
	a, ok := r.Installed(actor)
	if !ok {
		return ir.Session{}, exitcode.Problemf("launching %q: not an actor of the installed fleet (%s)", actor, installedNames(r))
	}
	for _, m := range []struct{ flag, source, value string }{{"ref", "subject.ref", call.Ref}, {"text", "subject.text", call.Text}} {
		if m.value == "" {
			continue
		}
		name := a.DispatchParam(m.source)
		if name == "" {
			return ir.Session{}, exitcode.Usagef("--%s: actor %q takes no %s when dispatched (give its params with --param)", m.flag, actor, m.source)
		}
		if _, dup := params[name]; dup {
			return ir.Session{}, exitcode.Usagef("--%s and --param both set %s", m.flag, name)
		}
		params[name] = m.value
	}
	// A skill written for any substrate may pass these: on GitHub they cannot apply, and the
	// launch goes on without them, saying so.
	for _, m := range []struct{ flag, value, why string }{
		{"from", call.From, "a dispatched run's subject.actor is who dispatched it"},
		{"kind", call.Kind, "a dispatched run's trigger.kind is workflow_dispatch"},
		{"branch", call.Branch, "a dispatched run checks out the default branch; its propose job names the proposal's branch"},
	} {
		if m.value != "" {
			fmt.Fprintf(call.Err, "autonomy: --%s %q is ignored on gh-actions: %s\n", m.flag, m.value, m.why)
		}
	}
	s, err := r.Launch(ctx, actor, params)
	if err != nil {
		return ir.Session{}, ghRunnerError(err)
	}
	return s, nil
}

func installedNames(r *ghrun.JobRunner) string {
	names := make([]string, len(r.Actors))
	for i, a := range r.Actors {
		names[i] = a.Name
	}
	return strings.Join(names, ", ")
}

// ghRunnerError maps a GitHub runner error to an exit code: a refusal is 1, anything else 2.
func ghRunnerError(err error) error {
	var denied *ghrun.DeniedError
	if errors.As(err, &denied) {
		return &exitcode.Error{Code: exitcode.Problems, Msg: "denied: " + denied.Msg}
	}
	var refused *effect.Refused
	if errors.As(err, &refused) {
		return &exitcode.Error{Code: exitcode.Problems, Msg: refused.Reason}
	}
	if errors.Is(err, ir.ErrUnsupported) {
		return &exitcode.Error{Code: exitcode.Problems, Msg: err.Error()}
	}
	return &exitcode.Error{Code: exitcode.Usage, Msg: err.Error()}
}
