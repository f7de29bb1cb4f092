package ghactions

import (
	"slices"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/ghevent"
	"github.com/autonomyhq/autonomy/ir"
)

// The per-item pause: a work item (an issue or a pull request) carrying the label
// policy.box.gh-actions.paused_label (effect.DefaultPausedLabel unless set) is left alone by
// every generated workflow. An event about it fires no agent job (pausedItemCond, from the
// event's payload); a run dispatched on it fails before its model starts (pausedStep, autonomy gh
// paused); and the trusted verbs (propose, review, apply, engage, ask, sweep) read the label
// again before they act on it (effect/paused.go), since it can be added while an agent runs.

// pausedLabel reads policy.box.gh-actions.paused_label: a GitHub label name (at most 50
// characters, no control character).
func (r *boxReader) pausedLabel(v *yaml.Node) string {
	const example = "e.g. paused_label: \"autonomy:paused\""
	s, ok := r.str(v, "paused_label", example)
	if !ok {
		return ""
	}
	if len([]rune(s)) > 50 || strings.TrimSpace(s) != s || strings.ContainsFunc(s, unicode.IsControl) {
		r.errorf(v, "write a label name of at most 50 characters, with no control character and no leading or trailing space, "+example, "paused_label: %q is not a label name GitHub accepts", s)
		return ""
	}
	return s
}

// pausedItemCond is the condition of an agent job that no event about a paused item fires it:
// the subject object of each of the actor's events (ghevent.SubjectObject) does not carry the
// pause label. "" when no event of the actor has a subject.
func (c *compiler) pausedItemCond(a *ir.Actor) string {
	var objects []string
	for _, t := range a.Triggers {
		if t.Kind != ir.Event {
			continue
		}
		if o := ghevent.SubjectObject(t.Event.Value); o != "" && !slices.Contains(objects, o) {
			objects = append(objects, o)
		}
	}
	var conds []string
	for _, o := range objects {
		// An event of another object leaves this path null, which contains() does not match.
		conds = append(conds, "!contains(github.event."+o+".labels.*.name, "+exprString(c.box.pausedLabel)+")")
	}
	return strings.Join(conds, " && ")
}

// exprString is s as a string literal of a GitHub expression.
func exprString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// pausedStep is the agent job's step, after the checkout (it reads the installed policy), that
// fails the job before its model starts when the run's work item is paused: a dispatched run's
// payload carries no labels. nil when the actor has no work item, or its job does not install
// autonomy (its trusted jobs still check).
func (c *compiler) pausedStep(a *ir.Actor, installs bool) mapping {
	subject := c.subject(a)
	if subject == "" || !installs {
		return nil
	}
	// Shared by every actor whose subject resolves the same way.
	return c.sharedStep("paused "+subject, func() mapping {
		return mapping{
			{key: "name", value: "Check that the work item is not paused"},
			{key: "id", value: pausedStepID},
			{key: "env", value: mapping{{key: "AUTONOMY_SUBJECT", value: expr(subject)}, {key: "GH_TOKEN", value: expr("github.token")}}},
			{key: "run", value: literal(`"$AUTONOMY_BIN" gh paused` + "\n")},
		}
	})
}

// installsTool reports whether the agent job of an actor that is not a step playbook installs
// autonomy, and so checks the pause (agentSteps): a skill's, a woven behavior's and one that calls
// the Runner; not a plain script's.
func (c *compiler) installsTool(a *ir.Actor) bool { return a.Skill || callsRunner(a) || c.weaves(a) }

// pausedStepID is the id of the pause check, which later steps' conditions read.
const pausedStepID = "paused"

// afterPauseCheck guards the steps of steps that run always() to report on the agent (its safe
// outputs, its model usage and transcript): a run its pause check stopped has nothing to report,
// and their errors would bury the pause's. The removal of the agent's git directory still runs.
func (c *compiler) afterPauseCheck(steps seq) seq {
	out := make(seq, len(steps))
	for i, st := range steps {
		out[i] = st
		m, ok := st.(mapping)
		if !ok || len(m) < 2 || m[1].key != "if" || m[1].value != plain("always()") || m[0].value == disarmStepName {
			continue
		}
		if c.emit.renders(m) == nil {
			out[i] = guardedStep(m)
			continue
		}
		// A shared step's guarded copy is shared too.
		g, ok := c.guarded[&m[0]]
		if !ok {
			if c.guarded == nil {
				c.guarded = map[*kv]mapping{}
			}
			g = c.emit.sharedMap(guardedStep(m))
			c.guarded[&m[0]] = g
		}
		out[i] = g
	}
	return out
}

// guardedStep is a copy of step (which may be shared with other workflows) whose condition
// always() also requires the pause check not to have failed.
func guardedStep(step mapping) mapping {
	g := append(mapping{}, step...)
	g[1] = kv{key: "if", value: plain("always() && steps." + pausedStepID + ".outcome != 'failure'")}
	return g
}
