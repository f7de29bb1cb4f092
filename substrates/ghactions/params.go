package ghactions

import (
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/ghactions/wire"
)

// correlationInput is the workflow_dispatch input a launcher sets to find the run it started.
const correlationInput = wire.CorrelationInput

// param is one env var of the job, resolved from its source for every trigger that declares it.
type param struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// Expr is the GitHub expression (without ${{ }}) the job env evaluates.
	Expr string `json:"expression"`
}

// firing is one way the workflow can start: the event_name GitHub reports for it.
func firing(t *ir.Trigger) string {
	switch t.Kind {
	case ir.Cron:
		return "schedule"
	case ir.Dispatch:
		return "workflow_dispatch"
	}
	return t.Event.Value
}

// resolveParams unions an actor's trigger params into job env, in order of first declaration.
// A param declared by every trigger resolves the same way whichever fired; otherwise each arm
// is guarded by the event that declares it, and anything else resolves to empty.
func resolveParams(a *ir.Actor) []param {
	// Actors have a handful of triggers and params: slices scanned linearly beat maps here,
	// which matters across a fleet of thousands.
	type arm struct{ event, expr string }
	type entry struct {
		name, source string
		arms         []arm
	}
	var entries []entry
	var events []string
	for _, t := range a.Triggers {
		ev := firing(t)
		if !slices.Contains(events, ev) {
			events = append(events, ev)
		}
	next:
		for _, p := range t.Params {
			name, src := p.Name.Value, p.Source.Value
			i := slices.IndexFunc(entries, func(e entry) bool { return e.name == name })
			if i < 0 {
				entries = append(entries, entry{name: name, source: src})
				i = len(entries) - 1
			}
			for _, x := range entries[i].arms {
				if x.event == ev {
					continue next // the same event declared twice: the first declaration wins
				}
			}
			expr := sourceExpr(src, ev)
			if t.Kind == ir.Dispatch {
				expr = dispatchExpr(src, name)
			}
			entries[i].arms = append(entries[i].arms, arm{ev, expr})
		}
	}
	out := make([]param, 0, len(entries))
	for _, e := range entries {
		as := e.arms
		var expr string
		if len(as) == len(events) && allSame(as, func(x arm) string { return x.expr }) {
			expr = as[0].expr
		} else {
			// One arm per distinct expression, guarded by every event that resolves it so.
			var exprs []string
			var guards [][]string
			for _, x := range as {
				if x.expr == "" {
					continue
				}
				k := slices.Index(exprs, x.expr)
				if k < 0 {
					exprs = append(exprs, x.expr)
					guards = append(guards, nil)
					k = len(exprs) - 1
				}
				guards[k] = append(guards[k], "github.event_name == '"+x.event+"'")
			}
			var parts []string
			for k, e := range exprs {
				g := strings.Join(guards[k], " || ")
				if len(guards[k]) > 1 {
					g = "(" + g + ")"
				}
				parts = append(parts, g+" && ("+e+")")
			}
			expr = strings.Join(parts, " || ")
		}
		switch {
		case expr == "":
			expr = "''"
		case !strings.HasPrefix(expr, "github.event_name == ") && !strings.HasPrefix(expr, "(github.event_name == "):
		default:
			// A guard that fails yields false, not empty: fall back to the empty string.
			expr += " || ''"
		}
		out = append(out, param{Name: e.name, Source: e.source, Expr: expr})
	}
	return out
}

func allSame[T any](xs []T, key func(T) string) bool {
	for _, x := range xs[1:] {
		if key(x) != key(xs[0]) {
			return false
		}
	}
	return true
}

// dispatchInputs lists the params the dispatcher forwards, as workflow_dispatch inputs.
func dispatchInputs(a *ir.Actor) []ir.Param {
	var out []ir.Param
	for _, t := range a.Triggers {
		if t.Kind != ir.Dispatch {
			continue
		}
		for _, p := range t.Params {
			if !slices.ContainsFunc(out, func(q ir.Param) bool { return q.Name.Value == p.Name.Value }) {
				out = append(out, p)
			}
		}
	}
	return out
}

// subjectExpr resolves the actor's subject (its work item) whichever trigger fired: the
// concurrency group and the human seam key on it.
func subjectExpr(a *ir.Actor) string {
	var parts []string
	for _, p := range dispatchInputs(a) {
		if p.Source.Value == "subject.ref" {
			parts = append(parts, "inputs."+p.Name.Value)
			break
		}
	}
	has := func(event string) bool {
		return slices.ContainsFunc(a.Triggers, func(t *ir.Trigger) bool { return t.Kind == ir.Event && t.Event.Value == event })
	}
	// The event fields, in a fixed order, for the events this actor has.
	for _, f := range []struct {
		field  string
		events []string
	}{
		{"github.event.issue.number", []string{"issues", "issue_comment"}},
		{"github.event.pull_request.number", []string{"pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment"}},
		{"github.event.discussion.number", []string{"discussion", "discussion_comment"}},
	} {
		for _, e := range f.events {
			if has(e) {
				parts = append(parts, f.field)
				break
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " || ")
}
