package ghactions

import (
	"sort"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
)

// correlationInput is the workflow_dispatch input a launcher sets to find the run it started:
// run-name echoes it. AUTONOMY_ is a reserved param prefix, so no param can take this name.
const correlationInput = "AUTONOMY_CORRELATION"

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
	type arm struct{ event, expr string }
	var order []string
	sources := map[string]string{}
	arms := map[string][]arm{}
	seen := map[string]map[string]bool{}
	for _, t := range a.Triggers {
		ev := firing(t)
		for _, p := range t.Params {
			name, src := p.Name.Value, p.Source.Value
			if _, ok := sources[name]; !ok {
				order = append(order, name)
				sources[name] = src
				seen[name] = map[string]bool{}
			}
			if seen[name][ev] {
				continue // the same event declared twice: the first declaration wins
			}
			seen[name][ev] = true
			expr := sourceExpr(src, ev)
			if t.Kind == ir.Dispatch {
				expr = dispatchExpr(src, name)
			}
			arms[name] = append(arms[name], arm{ev, expr})
		}
	}
	events := map[string]bool{}
	for _, t := range a.Triggers {
		events[firing(t)] = true
	}
	out := make([]param, 0, len(order))
	for _, name := range order {
		as := arms[name]
		var expr string
		if len(as) == len(events) && allSame(as, func(x arm) string { return x.expr }) {
			expr = as[0].expr
		} else {
			// One arm per distinct expression, guarded by every event that resolves it so.
			var exprs []string
			guards := map[string][]string{}
			for _, x := range as {
				if x.expr == "" {
					continue
				}
				if _, ok := guards[x.expr]; !ok {
					exprs = append(exprs, x.expr)
				}
				guards[x.expr] = append(guards[x.expr], "github.event_name == '"+x.event+"'")
			}
			var parts []string
			for _, e := range exprs {
				g := strings.Join(guards[e], " || ")
				if len(guards[e]) > 1 {
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
		out = append(out, param{Name: name, Source: sources[name], Expr: expr})
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
	seen := map[string]bool{}
	for _, t := range a.Triggers {
		if t.Kind != ir.Dispatch {
			continue
		}
		for _, p := range t.Params {
			if !seen[p.Name.Value] {
				seen[p.Name.Value] = true
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
	events := map[string]bool{}
	for _, t := range a.Triggers {
		if t.Kind == ir.Event {
			events[t.Event.Value] = true
		}
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
			if events[e] {
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

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
