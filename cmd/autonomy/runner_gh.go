package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// launchFlags are the launch verb's params, shared by both substrates.
type launchFlags struct {
	params     []string
	paramsJSON string
	req        *local.LaunchRequest
}

// parse merges --params-json and --param NAME=VALUE (a name given twice is refused).
func (lf *launchFlags) parse() (map[string]string, error) {
	out := map[string]string{}
	if lf.paramsJSON != "" {
		dec := json.NewDecoder(strings.NewReader(lf.paramsJSON))
		var m map[string]string
		if err := dec.Decode(&m); err != nil || dec.More() {
			return nil, usageError(`--params-json: give one JSON object of string values, like {"ISSUE":"42"}`)
		}
		for k, v := range m {
			if k == "" {
				return nil, usageError("--params-json: a param has an empty name")
			}
			out[k] = v
		}
	}
	for _, kv := range lf.params {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageError("--param %q: write NAME=VALUE", kv)
		}
		if _, dup := out[k]; dup {
			return nil, usageError("--param %s is given twice", k)
		}
		out[k] = v
	}
	return out, nil
}

// ghVerbs are the runner verbs the GitHub runner offers from a job.
var ghVerbs = []string{"launch", "get", "list", "cancel"}

// gh runs a runner verb on the GitHub runner, from the job's environment and the installation
// in the checkout (--dir, else $GITHUB_WORKSPACE, else the current directory).
func (f *runnerFlags) gh(cmd *cobra.Command, args []string) error {
	if f.substrate != ghactions.Name {
		return usageError("--target %q: one of local, gh-actions", f.substrate)
	}
	verb := cmd.Name()
	switch verb {
	case "launch", "get", "list", "cancel":
	default:
		return usageError("runner %s: not on gh-actions, which offers %s (GitHub cannot pause a run; logs, tick and serve are GitHub's own)", verb, strings.Join(ghVerbs, ", "))
	}
	dir := ""
	if cmd.Flags().Changed("dir") || cmd.InheritedFlags().Changed("dir") {
		dir = f.dir
	}
	r, err := ghactions.NewJobRunner(ghactions.JobOptions{Dir: dir})
	if err != nil {
		return ghRunnerError(err)
	}
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	switch verb {
	case "launch":
		s, err := f.ghLaunch(cmd, r, args[0])
		if err != nil {
			return err
		}
		if f.format == "json" {
			return writeJSON(out, s)
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
			return &exitError{Code: exitProblems, Msg: fmt.Sprintf("no session %s (a run of the fleet's workflows in %s)", args[0], r.Repo())}
		}
		if f.format == "json" {
			return writeJSON(out, s)
		}
		printGHSession(out, s)
	case "list":
		if f.all != nil && *f.all {
			return usageError("list --all: not on gh-actions, which lists the sessions in flight (the repository's Actions tab keeps every run)")
		}
		g, err := newGHSessions(r, dir)
		if err != nil {
			return ghRunnerError(err)
		}
		ss, err := g.List(ctx)
		if err != nil {
			return ghRunnerError(err)
		}
		if ss == nil {
			ss = []ir.Session{}
		}
		if f.format == "json" {
			return writeJSON(out, struct {
				Sessions []ir.Session `json:"sessions"`
			}{ss})
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tACTOR\tSTATUS\tPARAMS")
		for _, s := range ss {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.ID, s.Agent, s.Status, terminalSafe(paramsLine(s.Params)))
		}
		return tw.Flush()
	case "cancel":
		ok, err := r.Cancel(ctx, args[0])
		if err != nil {
			return ghRunnerError(err)
		}
		if !ok {
			return &exitError{Code: exitProblems, Msg: fmt.Sprintf("session %s: no run of the fleet in flight to cancel (unknown, or already ended)", args[0])}
		}
		fmt.Fprintf(out, "%s cancelled\n", args[0])
	}
	return nil
}

// ghLaunch launches actor with the params of the flags: --param and --params-json verbatim,
// --ref and --text into the dispatch inputs the actor forwards subject.ref and subject.text as.
func (f *runnerFlags) ghLaunch(cmd *cobra.Command, r *ghactions.JobRunner, actor string) (ir.Session, error) {
	lf := f.launch
	params, err := lf.parse()
	if err != nil {
		return ir.Session{}, err
	}
	a, ok := r.Installed(actor)
	if !ok {
		return ir.Session{}, &exitError{Code: exitProblems, Msg: fmt.Sprintf("launching %q: not an actor of the installed fleet (%s)", actor, installedNames(r))}
	}
	for _, m := range []struct{ flag, source, value string }{{"ref", "subject.ref", lf.req.Ref}, {"text", "subject.text", lf.req.Text}} {
		if m.value == "" {
			continue
		}
		name := a.DispatchParam(m.source)
		if name == "" {
			return ir.Session{}, usageError("--%s: actor %q takes no %s when dispatched (give its params with --param)", m.flag, actor, m.source)
		}
		if _, dup := params[name]; dup {
			return ir.Session{}, usageError("--%s and --param both set %s", m.flag, name)
		}
		params[name] = m.value
	}
	// A skill written for any substrate may pass these: on GitHub they cannot apply, and the
	// launch goes on without them, saying so.
	for _, m := range []struct{ flag, value, why string }{
		{"from", lf.req.From, "a dispatched run's subject.actor is who dispatched it"},
		{"kind", lf.req.Kind, "a dispatched run's trigger.kind is workflow_dispatch"},
		{"branch", lf.req.Branch, "a dispatched run checks out the default branch; its propose job names the proposal's branch"},
	} {
		if m.value != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "autonomy: --%s %q is ignored on gh-actions: %s\n", m.flag, m.value, m.why)
		}
	}
	s, err := r.Launch(cmd.Context(), actor, params)
	if err != nil {
		return ir.Session{}, ghRunnerError(err)
	}
	return s, nil
}

func installedNames(r *ghactions.JobRunner) string {
	names := make([]string, len(r.Actors))
	for i, a := range r.Actors {
		names[i] = a.Name
	}
	return strings.Join(names, ", ")
}

// ghRunnerError maps a GitHub runner error to an exit code: a refusal is 1, anything else 2.
func ghRunnerError(err error) error {
	var denied *ghactions.DeniedError
	if errors.As(err, &denied) {
		return &exitError{Code: exitProblems, Msg: "denied: " + denied.Msg}
	}
	if errors.Is(err, ir.ErrUnsupported) {
		return &exitError{Code: exitProblems, Msg: err.Error()}
	}
	return &exitError{Code: exitUsage, Msg: err.Error()}
}

func printGHSession(w io.Writer, s ir.Session) {
	fmt.Fprintf(w, "%-10s %s\n", "id:", s.ID)
	fmt.Fprintf(w, "%-10s %s\n", "actor:", s.Agent)
	fmt.Fprintf(w, "%-10s %s\n", "status:", s.Status)
	for _, k := range sortedParamKeys(s.Params) {
		fmt.Fprintf(w, "param:     %s=%q\n", k, s.Params[k])
	}
}

// paramsLine is params as one line of NAME=VALUE, quoted, sorted by name.
func paramsLine(p ir.LaunchParams) string {
	var b bytes.Buffer
	for i, k := range sortedParamKeys(p) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%q", k, p[k])
	}
	return b.String()
}
