package ir

import (
	"encoding/json"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The keys each mapping of a profile accepts, in the order error messages list them.
var (
	profileKeys   = []string{"schema", "targets", "codeHost", "actors", "agents", "policy", "resources", "documents"}
	triggerKeys   = []string{"cron", "event", "config", "dispatch", "params"}
	resultKeys    = []string{"schema"}
	executionKeys = []string{"workspace"}
	policyKeys    = []string{"maxConcurrent", "box"}
	documentsKeys = []string{"roles"}
)

// decoder turns the normalized YAML tree into a Profile, reporting structural problems.
type decoder struct{ r *reporter }

func decodeProfile(r *reporter, root *yaml.Node) *Profile {
	d := decoder{r}
	p := &Profile{}
	d.fields(root, "the profile", profileKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "schema":
			p.Schema, _ = d.str(v, "schema")
		case "targets":
			p.Targets = d.strList(v, "targets", "e.g. targets: [gh-actions]")
		case "codeHost":
			p.CodeHost, _ = d.str(v, "codeHost")
		case "actors", "agents":
			if p.ActorsKey.Pos.IsSet() {
				d.r.errorf(pos(k), "use actors: only (agents: is its older name)", "both %s and %s are given", p.ActorsKey.Value, key)
				return
			}
			p.ActorsKey = String{key, pos(k)}
			p.Actors = d.actors(v, key)
		case "policy":
			p.Policy = d.policy(v)
		case "resources":
			p.Resources = d.strList(v, "resources", "e.g. resources: [docs/standards/code.md]")
		case "documents":
			p.Documents = d.documents(v)
		}
	})
	return p
}

// fields checks that n is a mapping whose keys are all in allowed and calls fn for each pair.
// what names the mapping in messages ("actor \"develop\"", "the profile").
func (d decoder) fields(n *yaml.Node, what string, allowed []string, fn func(key string, k, v *yaml.Node)) bool {
	if !d.isMapping(n, what) {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !contains(allowed, k.Value) {
			d.r.errorf(pos(k), suggest(k.Value, allowed), "unknown key %q in %s", k.Value, what)
			continue
		}
		fn(k.Value, k, v)
	}
	return true
}

func (d decoder) isMapping(n *yaml.Node, what string) bool {
	if n.Kind == yaml.MappingNode {
		return true
	}
	d.r.errorf(pos(n), "", "%s must be a mapping, not %s", what, describe(n))
	return false
}

// str decodes a string scalar. An empty value or another type is reported.
func (d decoder) str(n *yaml.Node, what string) (String, bool) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if strings.TrimSpace(n.Value) == "" {
			// Emptiness is reported here, once; the validator skips empty values.
			d.r.errorf(pos(n), "", "%s is empty", what)
			return String{n.Value, pos(n)}, false
		}
		return String{n.Value, pos(n)}, true
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		d.r.errorf(pos(n), "", "%s has no value", what)
	} else {
		d.r.errorf(pos(n), quoteHint(n), "%s must be a string, not %s", what, describe(n))
	}
	return String{Pos: pos(n)}, false
}

// quoteHint suggests quoting a scalar YAML read as another type (on, 1.0, 2024-01-01).
func quoteHint(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return "quote it: \"" + n.Value + "\""
	}
	return ""
}

// strList decodes a list of strings.
func (d decoder) strList(n *yaml.Node, what, example string) []String {
	if n.Kind != yaml.SequenceNode {
		d.r.errorf(pos(n), example, "%s must be a list, not %s", what, describe(n))
		return nil
	}
	out := make([]String, 0, len(n.Content))
	for _, item := range n.Content {
		if s, ok := d.str(item, "an entry of "+what); ok {
			out = append(out, s)
		}
	}
	return out
}

// integer decodes an integer scalar.
func (d decoder) integer(n *yaml.Node, what, unit string) Int {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err == nil && v >= -1<<31 && v < 1<<31 {
			return Int{int(v), pos(n)}
		}
		d.r.errorf(pos(n), "", "%s %s is out of range", what, n.Value)
		return Int{}
	}
	hint := ""
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if _, err := strconv.Atoi(n.Value); err == nil {
			hint = "remove the quotes"
		}
	}
	d.r.errorf(pos(n), hint, "%s must be an integer%s, not %s", what, unit, describe(n))
	return Int{}
}

func (d decoder) actors(n *yaml.Node, key string) []*Actor {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // reported by Validate as "no actors"
	}
	if !d.isMapping(n, key) {
		return nil
	}
	out := make([]*Actor, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, d.actor(n.Content[i], n.Content[i+1]))
	}
	return out
}

func (d decoder) actor(k, v *yaml.Node) *Actor {
	a := &Actor{Name: String{k.Value, pos(k)}}
	what := "actor " + strconv.Quote(k.Value)
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		d.r.errorf(pos(k), "give it at least a behavior and triggers", "%s is empty", what)
		return a
	}
	d.fields(v, what, FieldNames(), func(key string, fk, fv *yaml.Node) {
		switch key {
		case "behavior":
			a.Behavior, _ = d.str(fv, what+": behavior")
		case "kind":
			a.Kind, _ = d.str(fv, what+": kind")
		case "capabilities":
			a.CapabilitiesPos = pos(fv)
			for _, c := range d.strList(fv, what+": capabilities", "e.g. capabilities: [tasks:converse]") {
				name, scope, _ := strings.Cut(c.Value, "@")
				a.Capabilities = append(a.Capabilities, Capability{Name: name, Scope: scope, Raw: c})
			}
		case "triggers":
			a.TriggersPos = pos(fk)
			if fv.Kind != yaml.SequenceNode {
				d.r.errorf(pos(fv), "e.g. triggers: [{ dispatch: true }]", "%s: triggers must be a list, not %s", what, describe(fv))
				return
			}
			for _, t := range fv.Content {
				a.Triggers = append(a.Triggers, d.trigger(t, what))
			}
		case "timeout":
			a.Timeout = d.integer(fv, what+": timeout", " number of minutes")
		case "review":
			a.Review, _ = d.str(fv, what+": review")
		case "result":
			a.Result = d.result(fv, what)
		case "execution":
			e := &Execution{Pos: pos(fk)}
			d.fields(fv, what+": execution", executionKeys, func(_ string, _, wv *yaml.Node) {
				e.Workspace, _ = d.str(wv, what+": execution.workspace")
			})
			a.Execution = e
		case "prelaunch":
			a.Prelaunch, _ = d.str(fv, what+": prelaunch")
		}
	})
	return a
}

func (d decoder) trigger(n *yaml.Node, actor string) *Trigger {
	t := &Trigger{Pos: pos(n)}
	what := actor + ": trigger"
	d.fields(n, what, triggerKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "cron":
			t.Cron, _ = d.str(v, what+" cron")
			t.cronCol = v.Column
			if v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
				t.cronCol++
			}
		case "event":
			t.Event, _ = d.str(v, what+" event")
		case "config":
			if d.isMapping(v, what+" config") {
				t.Config = v
			}
		case "dispatch":
			t.Dispatch = String{"true", pos(v)}
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
				d.r.errorf(pos(v), "write dispatch: true", "%s dispatch must be true, not %s", what, describe(v))
			} else if b, _ := strconv.ParseBool(strings.ToLower(v.Value)); !b {
				t.Dispatch.Value = "false"
			}
		case "params":
			if !d.isMapping(v, what+" params") {
				return
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				src, _ := d.str(v.Content[i+1], what+" param "+strconv.Quote(v.Content[i].Value))
				t.Params = append(t.Params, Param{Name: String{v.Content[i].Value, pos(v.Content[i])}, Source: src})
			}
		}
	})
	return t
}

func (d decoder) result(n *yaml.Node, actor string) *Result {
	res := &Result{Pos: pos(n)}
	d.fields(n, actor+": result", resultKeys, func(_ string, _, v *yaml.Node) {
		switch {
		case v.Kind == yaml.MappingNode:
			res.Inline, res.InlinePos, res.inline = toJSONValue(v), pos(v), v
		case v.Kind == yaml.ScalarNode && v.Tag == "!!str":
			res.Named = String{v.Value, pos(v)}
		default:
			d.r.errorf(pos(v), "name a contract (schema: autonomy.review.v1) or write an inline JSON Schema mapping", "%s: result.schema must be a contract name or a JSON Schema mapping, not %s", actor, describe(v))
		}
	})
	return res
}

func (d decoder) policy(n *yaml.Node) Policy {
	p := Policy{Pos: pos(n)}
	d.fields(n, "policy", policyKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "maxConcurrent":
			p.MaxConcurrent = d.integer(v, "policy.maxConcurrent", "")
		case "box":
			if !d.isMapping(v, "policy.box") {
				return
			}
			p.Box = v
			for i := 0; i+1 < len(v.Content); i += 2 {
				d.boxKey(&p, v.Content[i].Value, v.Content[i+1])
			}
		}
	})
	return p
}

// boxKey type-checks the keys of policy.box this tool owns; every other key is carried verbatim.
func (d decoder) boxKey(p *Policy, key string, v *yaml.Node) {
	switch key {
	case "taskStates":
		if !d.isMapping(v, "policy.box.taskStates") {
			return
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			k := v.Content[i]
			label, _ := d.str(v.Content[i+1], "policy.box.taskStates."+k.Value)
			p.TaskStates = append(p.TaskStates, TaskState{Key: String{k.Value, pos(k)}, Label: label})
		}
	case "gh-actions", "local":
		d.isMapping(v, "policy.box."+key)
	case "risk":
		if !d.isMapping(v, "policy.box.risk") {
			return
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			if v.Content[i].Value == "human_required_paths" {
				d.strList(v.Content[i+1], "policy.box.risk.human_required_paths", "e.g. human_required_paths: [\".github/workflows/**\"]")
			}
		}
	}
}

func (d decoder) documents(n *yaml.Node) *Documents {
	docs := &Documents{Pos: pos(n)}
	d.fields(n, "documents", documentsKeys, func(_ string, k, v *yaml.Node) {
		docs.RolesPos = pos(k)
		d.fields(v, "documents.roles", Roles, func(role string, rk, rv *yaml.Node) {
			path, _ := d.str(rv, "documents.roles."+role)
			docs.Roles = append(docs.Roles, Role{Name: String{role, pos(rk)}, Path: path})
		})
	})
	return docs
}

// toJSONValue converts a normalized YAML node to the values encoding/json would produce, so an
// inline JSON Schema can be compiled and carried.
func toJSONValue(n *yaml.Node) any {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = toJSONValue(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			s[i] = toJSONValue(c)
		}
		return s
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil
		case "!!bool":
			b, _ := strconv.ParseBool(strings.ToLower(n.Value))
			return b
		case "!!int", "!!float":
			if _, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err == nil {
				return json.Number(strings.ReplaceAll(n.Value, "_", ""))
			}
		}
		return n.Value
	}
	return nil
}
