package ghactions

import (
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// The human seam on GitHub. A kind: human actor's workflow engages a person: when it fires, its
// engage job runs autonomy gh engage, which posts the ask (the situation the launcher sent and
// the actor's task spec) on the work item with the token a resolution must quote, assigns and
// @-mentions the maintainers, and applies the tracker label mapped to input-required. The
// resolution is the control workflow's (autonomy gh control: "/agent approve|reject|answer
// TOKEN" from a maintainer, on that item), and so is the escalation (autonomy gh sweep). Nothing
// here moves a label or marks a task done: done is verified by whoever reads the resolution.

// humanWorkflow builds the workflow of a kind: human actor.
func (c *compiler) humanWorkflow(a *ir.Actor) mapping {
	name := a.Name.Value
	params := c.params(a)
	// The person's ask and item come from the params declared with those sources.
	var ref, ask string
	for _, p := range params {
		switch {
		case p.Source == "subject.ref" && ref == "":
			ref = p.Expr
		case p.Source == "subject.text" && ask == "":
			ask = p.Expr
		}
	}
	writes := a.Holds("tasks:converse") || a.Holds("tasks:author")
	perms := Permissions{}
	perms.merge(baseline)
	if writes {
		perms["issues"] = Write
	} else {
		c.warnf(a.CapabilitiesPos, "grant tasks:converse so the workflow can post the ask and record the answer",
			"human actor %q holds neither tasks:converse nor tasks:author: on gh-actions its ask goes to the run summary only and no resolution can be recorded", name)
	}
	if ref == "" {
		c.warnf(a.TriggersPos, "forward the work item, e.g. params: { ITEM: subject.ref }",
			"human actor %q forwards no subject.ref: on gh-actions its ask goes to the run summary only", name)
	}

	on := c.on(a)
	wf := make(mapping, 0, 6)
	wf.add("name", name)
	if hasDispatch(a) {
		wf.add("run-name", runName(a))
	}
	wf.add("on", on)
	wf.add("permissions", mapping{})
	wf.add("defaults", bashDefaults)

	env := mapping{}
	c.paramEnv(&env, a)
	env.add("AUTONOMY_ACTOR", name)
	env.add("AUTONOMY_BEHAVIOR", literalValue(behaviorPath(a)))
	env.add("AUTONOMY_SUBJECT", expr(orEmpty(ref)))
	env.add("AUTONOMY_ASK", expr(orEmpty(ask)))
	env.add(substrates.PolicyEnv, substrates.PolicyPath)
	env.add("GH_TOKEN", expr("github.token"))
	engage := make(mapping, 0, 9)
	engage.add("name", "engage "+name)
	engageCond := c.jobIf(a)
	engage.add("if", expr(engageCond))
	engage.add("runs-on", runsOn(c.box.runsOn))
	engage.add("timeout-minutes", 10)
	engage.add("permissions", c.permissions(perms))
	engage.add("concurrency", concurrency(name, c.subject(a), engageCond))
	engage.add("env", env)
	engage.add("steps", seq{
		checkout.step("Check out the task spec", mapping{{key: "persist-credentials", value: false}, {key: "sparse-checkout", value: dataDir}}),
		c.toolStep(),
		mapping{{key: "name", value: "autonomy gh engage"}, {key: "run", value: literal(`"$AUTONOMY_BIN" gh engage` + "\n")}},
	})
	jobs := mapping{{key: "engage", value: engage}}
	wf.add("jobs", jobs)

	c.actors = append(c.actors, actorManifest{
		Name: name, Kind: "human", Workflow: WorkflowPath(name), Behavior: behaviorPath(a),
		Capabilities: capabilityStrings(a), Permissions: perms, Triggers: c.shapeOf(a).triggers, Params: params, shape: c.shapeOf(a),
		Timeout: a.Timeout.Value,
	})
	return wf
}

func orEmpty(e string) string {
	if e == "" {
		return "''"
	}
	return e
}
