package kubernetes

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
)

// Firing is what a launch's param sources resolve from (ir's catalog of sources): subject.ref,
// subject.text, subject.actor and trigger.kind as the launcher gives them ("" leaves each to the
// runner: subject.actor is then who launches, trigger.kind dispatch).
type Firing struct{ Ref, Text, From, Kind string }

// gatingSource reports whether source says who fired a session: only the runner sets such a
// param for a session's launch.
func gatingSource(source string) bool {
	return source == "subject.actor" || source == "subject.actorRole"
}

// dispatchSources are the params an actor's dispatch trigger binds to sources (those of every
// trigger when it has no dispatch trigger, as local resolves a launch).
func dispatchSources(triggers []Trigger) []Param {
	for _, t := range triggers {
		if t.Kind == string(ir.Dispatch) {
			return t.Params
		}
	}
	var all []Param
	for _, t := range triggers {
		for _, p := range t.Params {
			if !slices.ContainsFunc(all, func(q Param) bool { return q.Name == p.Name }) {
				all = append(all, p)
			}
		}
	}
	return all
}

// LaunchFiring starts a session of agent fired with f: each param its dispatch trigger binds to a
// source takes that source's value, then params set declared params verbatim. As the operator,
// subject.actor is f.From (else the operator's user name) and subject.actorRole OWNER; from
// inside a session (a Caller), they are the calling actor and NONE, and a session setting them
// (a param bound to either, or f.From naming another actor) is denied.
func (r *Runner) LaunchFiring(ctx context.Context, agent string, f Firing, params ir.LaunchParams) (ir.Session, error) {
	a := r.actors[agent]
	if a == nil {
		return r.launch(ctx, agent, f.Ref, params)
	}
	if err := r.authorize("launch", agent); err != nil {
		return ir.Session{}, err
	}
	resolved, err := r.resolve(a, f, params)
	if err != nil {
		return ir.Session{}, err
	}
	return r.launch(ctx, agent, f.Ref, resolved)
}

// resolve is the params of a launch of a fired with f (see LaunchFiring).
func (r *Runner) resolve(a *RunnerActor, f Firing, params ir.LaunchParams) (ir.LaunchParams, error) {
	from, role := f.From, "OWNER"
	if r.opts.Caller != nil {
		var forged []string
		for _, p := range a.Sources {
			if _, set := params[p.Name]; set && checkedSource(p.Source) {
				forged = append(forged, fmt.Sprintf("--param %s (bound to %s)", p.Name, p.Source))
			}
		}
		if f.From != "" && f.From != r.opts.CallerActor {
			forged = append(forged, "--from "+f.From)
		}
		if f.Kind != "" && f.Kind != string(ir.Dispatch) {
			forged = append(forged, "--kind "+f.Kind)
		}
		if len(forged) > 0 {
			return nil, &DeniedError{Msg: fmt.Sprintf("%s may not set %s: from a session, subject.actor is the calling actor (%s), subject.actorRole is NONE and trigger.kind is dispatch; only the operator sets them (drop the flag)",
				r.opts.Caller.Who, strings.Join(forged, ", "), r.opts.CallerActor)}
		}
		from, role = r.opts.CallerActor, "NONE"
	} else if from == "" {
		from = operatorName()
	}
	value := map[string]string{"subject.ref": f.Ref, "subject.text": f.Text, "subject.actor": from, "subject.actorRole": role, "trigger.kind": f.Kind}
	if value["trigger.kind"] == "" {
		value["trigger.kind"] = string(ir.Dispatch)
	}
	out := ir.LaunchParams{}
	for _, p := range a.Sources {
		out[p.Name] = value[p.Source]
	}
	for k, v := range params {
		out[k] = v
	}
	return out, nil
}

// operatorName is subject.actor of the operator's launch without --from: the user running the
// runner.
func operatorName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if n := os.Getenv("USER"); n != "" {
		return n
	}
	return "operator"
}
