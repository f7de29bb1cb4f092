package kubernetes

import (
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
)

// gatingShape is the CEL condition a Job of actor a a fleet ServiceAccount creates (a session's
// launch) meets: a param a binds to subject.actorRole is NONE, and one it binds to subject.actor
// is the actor of that ServiceAccount, as the runner sets them for a session's launch; a session
// calling the API server itself cannot set who fired it either. ctr is the session container's
// CEL path; "" when a binds no param to those sources.
func (c *compiler) gatingShape(a *ir.Actor, ctr string) string {
	var conds []string
	seen := map[string]bool{}
	for _, t := range a.Triggers {
		for _, p := range t.Params {
			name, src := p.Name.Value, p.Source.Value
			if seen[name] || !gatingSource(src) {
				continue
			}
			seen[name] = true
			want := celString("NONE")
			if src == "subject.actor" {
				want = c.callerNames() + "[variables.sa]"
			}
			conds = append(conds, "e.name != "+celString(name)+" || (has(e.value) && e.value == "+want+")")
		}
	}
	if len(conds) == 0 {
		return ""
	}
	return "!has(" + ctr + ".env) || " + ctr + ".env.all(e, (" + strings.Join(conds, ") && (") + "))"
}

// callerNames is the CEL map of the fleet's ServiceAccounts to their actors' names.
func (c *compiler) callerNames() string {
	var entries []string
	for _, a := range c.p.Actors {
		entries = append(entries, celString(ObjectName(a.Name.Value))+": "+celString(a.Name.Value))
	}
	slices.Sort(entries)
	return "{" + strings.Join(entries, ", ") + "}"
}
