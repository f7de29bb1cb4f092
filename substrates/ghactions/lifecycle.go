package ghactions

import (
	"fmt"

	"github.com/autonomyhq/autonomy/ir"
)

// A capsule playbook's life cycle (seed 000) decides what a new run of an agent whose behavior it
// is follows: a superseded playbook's new runs follow its successor (installed by compile; the
// agent's AUTONOMY_BEHAVIOR and the manifest point at it, and a step says so in the job's log),
// an archived one starts no new run (the agent job's one step refuses, saying why, and nothing
// else of the job runs: no agent installed, no model, no checkout).

// agentBehavior is where the behavior a new run of agent a follows is installed.
func (c *compiler) agentBehavior(a *ir.Actor) string {
	if lc := c.r.Behavior(a).Lifecycle; lc != nil && lc.Status == "superseded" {
		return dataDir + "/" + lc.Successor
	}
	return behaviorPath(a)
}

// lifecycleSteps are the agent job's steps a capsule behavior's life cycle calls for: for a
// superseded one, a step saying the run follows its successor (before the others); for an
// archived one, the refusal, which replaces every other step (refused is true). The messages are
// in the step's env, never in its script.
func (c *compiler) lifecycleSteps(a *ir.Actor) (steps seq, refused bool) {
	lc := c.r.Behavior(a).Lifecycle
	if lc == nil {
		return nil, false
	}
	if lc.Status == "superseded" {
		msg := fmt.Sprintf("the behavior %s is superseded (status: superseded at %s): this run follows its successor %s (%s)", a.BehaviorFile, lc.At, lc.Successor, lc.Chain)
		return seq{mapping{
			{key: "name", value: "Follow the successor of the superseded behavior"},
			{key: "env", value: mapping{{key: "AUTONOMY_LIFECYCLE", value: literalValue(msg)}}},
			{key: "run", value: literal(`echo "::notice::autonomy: $AUTONOMY_LIFECYCLE"` + "\n")},
		}}, false
	}
	c.warnings = append(c.warnings, ir.Diagnostic{File: c.p.File, Pos: a.Behavior.Pos, Severity: ir.Warning,
		Message: fmt.Sprintf("actor %q: %s; every run of its workflow refuses at once", a.Name.Value, lc.Reason),
		Hint:    "point behavior: at the playbook that replaced it, or remove the actor"})
	msg := fmt.Sprintf("actor %q: %s (point behavior: at the playbook that replaced it and compile again)", a.Name.Value, lc.Reason)
	return seq{mapping{
		{key: "name", value: "Refuse: the behavior is archived"},
		{key: "env", value: mapping{{key: "AUTONOMY_LIFECYCLE", value: literalValue(msg)}}},
		{key: "run", value: literal(`echo "::error::autonomy: $AUTONOMY_LIFECYCLE"` + "\nexit 1\n")},
	}}, true
}
