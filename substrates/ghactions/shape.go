package ghactions

import (
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
)

// A fleet's actors come in a few shapes: the actors of one role declare the same triggers. What
// an actor's triggers alone decide (its job's params, its subject, its workflow's on:) is
// derived once per distinct list of triggers, and the on: mapping is shared between the
// workflows (emitter.share).

// shape is what an actor's triggers decide, whoever declares them.
type shape struct {
	params  []param // resolveParams; read-only
	subject string  // subjectExpr
	on      mapping // compiler.onOf, shared; nil until built
	env     mapping // the params' env entries (compiler.paramEnv); nil until built
	jobIf   string  // the agent job's condition (compiler.jobIf); "" until built
	// triggers are the manifest's triggers (triggerManifest); read-only.
	triggers []trigger
	// json is the manifest's text of the triggers and params (shapeJSON), at jsonDepth; nil
	// until written.
	json      []byte
	jsonDepth int
}

// shapeOf is the shape of a's triggers.
func (c *compiler) shapeOf(a *ir.Actor) *shape {
	if c.lastActor == a {
		return c.lastShape
	}
	key := triggersKey(a.Triggers)
	s, ok := c.shapes[key]
	if !ok {
		if c.shapes == nil {
			c.shapes = map[string]*shape{}
		}
		s = &shape{params: resolveParams(a), subject: subjectExpr(a), triggers: triggerManifest(a)}
		c.shapes[key] = s
	}
	c.lastActor, c.lastShape = a, s
	return s
}

// params are a's params, resolved from its triggers (resolveParams).
func (c *compiler) params(a *ir.Actor) []param { return c.shapeOf(a).params }

// subject is a's subject (subjectExpr).
func (c *compiler) subject(a *ir.Actor) string { return c.shapeOf(a).subject }

// on is a's workflow's on: (onOf), shared: a caller that changes it changes a copy.
func (c *compiler) on(a *ir.Actor) mapping {
	s := c.shapeOf(a)
	if s.on == nil {
		s.on = c.emit.sharedMap(c.onOf(a))
	}
	return s.on
}

// triggersKey is everything the shape reads of triggers, each string length-prefixed, so two
// lists of triggers have the same key only when they are the same (whatever text a profile
// puts in a cron, an event name, a config or a param).
func triggersKey(triggers []*ir.Trigger) string {
	var b strings.Builder
	b.Grow(256)
	for _, t := range triggers {
		for _, s := range []string{string(t.Kind), t.Cron.Value, t.Event.Value, t.Dispatch.Value} {
			keyString(&b, s)
		}
		nodeKey(&b, t.Config)
		b.WriteString(strconv.Itoa(len(t.Params)))
		for _, p := range t.Params {
			keyString(&b, p.Name.Value)
			keyString(&b, p.Source.Value)
		}
		b.WriteByte(';')
	}
	return b.String()
}

// keyString writes s to a key, after its length.
func keyString(b *strings.Builder, s string) {
	b.WriteString(strconv.Itoa(len(s)))
	b.WriteByte(':')
	b.WriteString(s)
}

// nodeKey writes what fromNode reads of a YAML node (its kind, tag, value and children) to a key;
// "-" for none.
func nodeKey(b *strings.Builder, n *yaml.Node) {
	if n == nil {
		b.WriteByte('-')
		return
	}
	b.WriteString(strconv.Itoa(int(n.Kind)))
	keyString(b, n.Tag)
	keyString(b, n.Value)
	b.WriteString(strconv.Itoa(len(n.Content)))
	b.WriteByte('[')
	for _, c := range n.Content {
		nodeKey(b, c)
	}
	b.WriteByte(']')
}

// jobIf is the condition an agent job runs under: the fleet is not paused, and an event any
// outsider can fire came from a trusted author (or a same-repository pull request); and extra.
// Unless a comment fires the actor (its command names the actor), the condition is its shape's,
// built once.
func (c *compiler) jobIf(a *ir.Actor, extra ...string) string {
	cond := ""
	if byName := slices.ContainsFunc(a.Triggers, isComment); byName {
		cond = c.jobCond(a)
	} else if s := c.shapeOf(a); s.jobIf != "" {
		cond = s.jobIf
	} else {
		cond = c.jobCond(a)
		s.jobIf = cond
	}
	if len(extra) == 0 {
		return cond
	}
	return cond + " && " + strings.Join(extra, " && ")
}

// isComment reports whether t is an issue_comment event trigger.
func isComment(t *ir.Trigger) bool { return t.Kind == ir.Event && t.Event.Value == "issue_comment" }

// jobCond is jobIf's condition without extra, built anew.
func (c *compiler) jobCond(a *ir.Actor) string {
	conds := []string{pausedGuard}
	if hasDispatch(a) {
		// Anyone holding actions: write (every proposer) can dispatch a workflow on any branch,
		// and the run would read its skill, standards and policy from that branch: a proposer
		// could rewrite its reviewer. Dispatched runs are honored on the default branch only.
		conds = append(conds, "(github.event_name != 'workflow_dispatch' || github.ref == format('refs/heads/{0}', github.event.repository.default_branch))")
	}
	for i, t := range a.Triggers {
		if t.Kind != ir.Event || slices.ContainsFunc(a.Triggers[:i], func(u *ir.Trigger) bool { return u.Kind == ir.Event && u.Event.Value == t.Event.Value }) {
			continue
		}
		if g := gate(t.Event.Value, c.rolesJSON()); g != "" {
			if t.Event.Value == "issue_comment" {
				if plainComments(a) {
					// Any comment but a command, which is addressed to someone.
					g += " && !" + commandCond("")
				} else {
					// A comment fires the actor only when it is addressed to it.
					g += " && " + commandCond(a.Name.Value)
				}
			}
			conds = append(conds, "(github.event_name != '"+t.Event.Value+"' || "+g+")")
		}
	}
	if p := c.pausedItemCond(a); p != "" {
		conds = append(conds, p) // paused.go
	}
	return strings.Join(conds, " && ")
}

// paramEnv adds a's params to env, each resolved from its source: its shape's entries, built
// once.
func (c *compiler) paramEnv(env *mapping, a *ir.Actor) {
	s := c.shapeOf(a)
	if s.env == nil {
		s.env = make(mapping, 0, len(s.params))
		for _, p := range s.params {
			s.env.add(p.Name, expr(p.Expr))
		}
	}
	*env = append(*env, s.env...)
}
