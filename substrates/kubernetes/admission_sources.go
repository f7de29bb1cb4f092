package kubernetes

import (
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
)

// checkedSource reports whether the admission policy checks the value of a param bound to
// source in a Job a fleet ServiceAccount creates: who fired the session (gatingSource) and
// trigger.kind, which a session's launch sets as the runner does (resolve).
func checkedSource(source string) bool { return gatingSource(source) || source == "trigger.kind" }

// irTriggers are a's triggers as the fleet config holds them (kind and params only), so that the
// policy and the runner compute a launch's sources with one function (dispatchSources).
func irTriggers(a *ir.Actor) []Trigger {
	var out []Trigger
	for _, t := range a.Triggers {
		tr := Trigger{Kind: string(t.Kind)}
		for _, p := range t.Params {
			tr.Params = append(tr.Params, Param{Name: p.Name.Value, Source: p.Source.Value})
		}
		out = append(out, tr)
	}
	return out
}

// gatingShape is the CEL condition a Job of actor a a fleet ServiceAccount creates (a session's
// launch) meets, as the runner resolves a session's launch: a param a binds (on any trigger) to
// subject.actorRole is NONE, one bound to subject.actor is the actor of that ServiceAccount and
// one bound to trigger.kind is dispatch; and each such param a's dispatch launch sets
// (dispatchSources) is present, so a Job leaving them out cannot look fired by a CronJob (no
// actor, no role). A param bound only on a cron or event trigger may be left out. A session
// calling the API server itself cannot set who fired it either. ctr is the session container's
// CEL path; "" when a binds no param to those sources.
func (c *compiler) gatingShape(a *ir.Actor, ctr string) string {
	triggers := irTriggers(a)
	want := func(src string) string {
		switch src {
		case "subject.actor":
			return c.callerNames() + "[variables.sa]"
		case "trigger.kind":
			return celString(string(ir.Dispatch))
		}
		return celString("NONE")
	}
	var values, present []string
	seen := map[string]bool{}
	for _, t := range triggers {
		for _, p := range t.Params {
			if seen[p.Name] || !checkedSource(p.Source) {
				continue
			}
			seen[p.Name] = true
			values = append(values, "e.name != "+celString(p.Name)+" || (has(e.value) && e.value == "+want(p.Source)+")")
		}
	}
	for _, p := range dispatchSources(triggers) {
		if checkedSource(p.Source) {
			present = append(present, ctr+".env.exists(e, e.name == "+celString(p.Name)+")")
		}
	}
	if len(values) == 0 {
		return ""
	}
	conds := append([]string{ctr + ".env.all(e, (" + strings.Join(values, ") && (") + "))"}, present...)
	return "has(" + ctr + ".env) && (" + strings.Join(conds, ") && (") + ")"
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
