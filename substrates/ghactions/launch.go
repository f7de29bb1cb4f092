package ghactions

import (
	"slices"

	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
)

// Launch edges on GitHub. An actor launches another by dispatching its workflow (the apply job's
// agent:launch, or `autonomy runner launch` from a job that calls the runner), and GitHub refuses
// to dispatch a workflow with no workflow_dispatch trigger. So an actor that some actor may
// launch (an unscoped agent:launch, or one whose scope matches it) is compiled with a dispatch
// trigger even when the profile declares none: its inputs are the params its other triggers
// declare, so a launch sets the same env a firing event would.

// launchTargets is the set of actors some actor may launch. A fleet's launchers share a few
// grants (agent:launch unscoped, or one scope for every orchestrator): each distinct scope is
// matched against the actors once, so the work grows with the actors times the distinct scopes,
// not times the launchers.
func launchTargets(p *ir.Profile) map[string]bool {
	scopes := map[string]bool{}
	for _, l := range p.Actors {
		for _, c := range l.Capabilities {
			if c.Name == "agent:launch" {
				scopes[c.Scope] = true
			}
		}
	}
	out := map[string]bool{}
	if len(scopes) == 0 {
		return out
	}
	checkers := make([]tools.Checker, 0, len(scopes))
	for s := range scopes {
		checkers = append(checkers, tools.Checker{Grants: []tools.Grant{{Name: "agent:launch", Scope: s}}})
	}
	for _, t := range p.Actors {
		for i := range checkers {
			if checkers[i].Allows("agent:launch", t.Name.Value) {
				out[t.Name.Value] = true
				break
			}
		}
	}
	return out
}

// launchable returns a with a dispatch trigger, adding one when it has none: its params are the
// union of the params a's triggers declare (the first declaration of a name wins).
func launchable(a *ir.Actor) *ir.Actor {
	if hasDispatch(a) {
		return a
	}
	var params []ir.Param
	for _, t := range a.Triggers {
		for _, p := range t.Params {
			if !slices.ContainsFunc(params, func(q ir.Param) bool { return q.Name.Value == p.Name.Value }) {
				params = append(params, p)
			}
		}
	}
	b := *a
	b.Triggers = append(slices.Clone(a.Triggers), &ir.Trigger{Pos: a.TriggersPos, Kind: ir.Dispatch,
		Dispatch: ir.String{Value: "true", Pos: a.TriggersPos}, Params: params})
	return &b
}

// launchEdges makes every launch target dispatchable, and reports a launch that can never land
// on GitHub: one from an actor whose job can neither apply it nor call the runner (a script or
// step playbook holding only a scoped agent:launch). A target whose params exceed GitHub's
// inputs is reported by actor.
func (c *compiler) launchEdges() {
	for name := range launchTargets(c.p) {
		c.byName[name] = launchable(c.byName[name])
	}
	for _, l := range c.p.Actors {
		b := c.r.Behavior(l)
		// A script's apply job verifies its result only: it applies no effect.
		if l.Holds("agent:launch") && !callsRunner(l) && !(l.Skill && applies(l, b.Kind == resolved.Steps && b.StepPlaybook())) {
			c.warnf(l.CapabilitiesPos, "give it a skill behavior (its launches are applied after the model job), or an unscoped agent:launch (its job calls the runner)",
				"actor %q holds agent:launch, but on gh-actions its job can neither apply a launch (it is not a skill run with the MCP server) nor call the runner (a scoped agent:launch gets no token): its launches can never land", l.Name.Value)
		}
	}
}
