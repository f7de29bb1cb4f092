package ir

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/mergecheck"
)

// The keys each mapping of a profile accepts, in the order error messages list them.
var (
	profileKeys   = []string{"schema", "targets", "codeHost", "actors", "agents", "policy", "resources", "documents"}
	triggerKeys   = []string{"cron", "event", "config", "dispatch", "params"}
	resultKeys    = []string{"schema"}
	executionKeys = []string{"workspace"}
	policyKeys    = []string{"maxConcurrent", "box"}
	documentsKeys = []string{"roles"}
	// sharedBoxKeys are the keys of policy.box this tool reads whatever the target; each
	// registered target owns more (boxKeys).
	sharedBoxKeys = []string{"risk", "human", "autonomy", "tracker", "mcp", "cli", "web"}
)

// boxKeys are the keys of policy.box this tool and its substrates read.
func boxKeys() []string {
	return append(append([]string{"taskStates"}, ownedBoxKeys()...), sharedBoxKeys...)
}

const actorExample = "e.g. actors: { hello: { behavior: skills/hello, triggers: [{ dispatch: true }] } }"

// decoder turns the normalized YAML tree into a Profile, reporting structural problems: unknown
// keys, wrong types, empty values. A value it reports is left out of the Profile (or marked), so
// the validator does not report the same defect again in other words.
type decoder struct{ r *reporter }

func decodeProfile(r *reporter, root *yaml.Node) *Profile {
	d := decoder{r}
	p := &Profile{}
	p.typos = d.fields(root, "the profile", profileKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "schema":
			p.Schema, _ = d.str(v, "schema", "write schema: "+Schema)
		case "targets":
			p.TargetsPos = pos(k)
			p.Targets = d.strList(v, "targets", targetsExample(), targetsExample())
		case "codeHost":
			p.CodeHost, _ = d.str(v, "codeHost", "valid: "+strings.Join(CodeHosts, ", "))
		case "actors", "agents":
			if p.ActorsKey.Pos.IsSet() {
				d.r.errorf(pos(k), "keep actors: only; agents: is its older name", "both %s and %s are given", p.ActorsKey.Value, key)
				return
			}
			p.ActorsKey = String{key, pos(k)}
			p.Actors = d.actors(k, v)
		case "policy":
			p.Policy = d.policy(v)
		case "resources":
			p.Resources = d.strList(v, "resources", "e.g. resources: [docs/standards/code.md]", "")
		case "documents":
			p.Documents = d.documents(v)
		}
	})
	return p
}

// fields calls fn for each pair of mapping n and reports the keys not in allowed; where names the
// mapping in messages ("the profile", "actor \"develop\""). It returns the valid keys that unknown
// keys were probably meant to be, so the validator does not also report those keys as missing.
func (d decoder) fields(n *yaml.Node, where string, allowed []string, fn func(key string, k, v *yaml.Node)) (typos map[string]bool) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !contains(allowed, k.Value) {
			if where == "the profile" && strings.HasPrefix(k.Value, "x-") {
				continue // an extension key: free-form, typically the home of YAML anchors
			}
			d.r.errorf(pos(k), suggest(k.Value, allowed), "unknown key %q in %s", k.Value, where)
			if near := nearest(k.Value, allowed); near != "" {
				if typos == nil {
					typos = map[string]bool{}
				}
				typos[near] = true
			}
			continue
		}
		fn(k.Value, k, v)
	}
	return typos
}

// mapping reports whether n is a mapping, and reports it (with the example as hint) when not.
func (d decoder) mapping(n *yaml.Node, what, example string) bool {
	if n.Kind == yaml.MappingNode {
		return true
	}
	if isNull(n) {
		d.r.errorf(pos(n), example, "%s has no value", what)
	} else {
		d.r.errorf(pos(n), example, "%s must be a mapping, not %s", what, describe(n))
	}
	return false
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// str decodes a non-empty string scalar; example is the hint when it is missing or mistyped.
func (d decoder) str(n *yaml.Node, what, example string) (String, bool) {
	return d.strLazy(n, func() string { return what }, func() string { return example })
}

// strLazy is str for the hot paths, run for every actor, trigger and param: the message and the
// hint are only built when the value is wrong.
func (d decoder) strLazy(n *yaml.Node, what, example func() string) (String, bool) {
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.TrimSpace(n.Value) != "":
		return String{n.Value, pos(n)}, true
	case n.Kind == yaml.ScalarNode && n.Tag == "!!str":
		d.r.errorf(pos(n), example(), "%s is empty", what())
	case isNull(n):
		d.r.errorf(pos(n), example(), "%s has no value", what())
	case n.Kind == yaml.ScalarNode:
		d.r.errorf(pos(n), "quote it: \""+n.Value+"\"", "%s must be a string, not %s", what(), describe(n))
	default:
		d.r.errorf(pos(n), example(), "%s must be a string, not %s", what(), describe(n))
	}
	// The position is kept so the validator knows the key was given; the empty value tells it the
	// decoder has already reported the problem.
	return String{Pos: pos(n)}, false
}

// strList decodes a list of strings. An empty list is reported when emptyHint is not "".
func (d decoder) strList(n *yaml.Node, what, example, emptyHint string) []String {
	if n.Kind != yaml.SequenceNode {
		if isNull(n) && emptyHint == "" {
			return nil
		}
		d.r.errorf(pos(n), example, "%s must be a list, not %s", what, describe(n))
		return nil
	}
	if len(n.Content) == 0 && emptyHint != "" {
		d.r.errorf(pos(n), emptyHint, "%s is empty", what)
	}
	out := make([]String, 0, len(n.Content))
	for _, item := range n.Content {
		if s, ok := d.str(item, "an entry of "+what, example); ok {
			out = append(out, s)
		}
	}
	return out
}

// integer decodes an integer scalar; example is the hint when it is mistyped and rangeHint when it
// does not fit 32 bits (the validator checks the field's own range).
func (d decoder) integer(n *yaml.Node, what, unit, example, rangeHint string) Int {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err == nil && v >= -1<<31 && v < 1<<31 {
			return Int{int(v), pos(n)}
		}
		d.r.errorf(pos(n), rangeHint, "%s %s is out of range", what, n.Value)
		return Int{}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!float" && wholeNumber().MatchString(n.Value) {
		// YAML reads an integer too large for 64 bits as a float: it is out of range, not a fraction.
		d.r.errorf(pos(n), rangeHint, "%s %s is out of range", what, n.Value)
		return Int{}
	}
	hint := example
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!str":
		if _, err := strconv.Atoi(strings.TrimSpace(n.Value)); err == nil {
			hint = "remove the quotes"
		}
	case n.Kind == yaml.ScalarNode && n.Tag == "!!float":
		hint = "give whole " + unitOr(unit, "numbers") + ", " + example
	}
	noun := "an integer"
	if unit != "" {
		noun = "an integer number of " + unit
	}
	d.r.errorf(pos(n), hint, "%s must be %s, not %s", what, noun, describe(n))
	return Int{}
}

var wholeNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[-+]?[0-9_]+$`) })

func unitOr(unit, other string) string {
	if unit == "" {
		return other
	}
	return unit
}

// actors decodes the actor map. An empty map is reported here; a missing one by Validate.
func (d decoder) actors(k, n *yaml.Node) []*Actor {
	if isNull(n) || n.Kind == yaml.MappingNode && len(n.Content) == 0 {
		d.r.errorf(pos(k), "declare at least one actor, "+actorExample, "%s is empty", k.Value)
		return nil
	}
	if !d.mapping(n, k.Value, actorExample) {
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
	who := "actor " + strconv.Quote(k.Value)
	if isNull(v) || v.Kind == yaml.MappingNode && len(v.Content) == 0 {
		d.r.errorf(pos(k), "give it at least a behavior and triggers, e.g. "+k.Value+": { behavior: skills/"+sanitizeName(k.Value)+", triggers: [{ dispatch: true }] }", "%s is empty", who)
		a.hollow = true
		return a
	}
	if !d.mapping(v, who, "an actor is a mapping of behavior, capabilities, triggers, ...") {
		a.hollow = true
		return a
	}
	field := func(name string) string { return who + ": " + name }
	a.typos = d.fields(v, who, fieldNames, func(key string, fk, fv *yaml.Node) {
		switch key {
		case "behavior":
			a.Behavior, _ = d.strLazy(fv, func() string { return field("behavior") }, func() string { return "e.g. behavior: skills/" + sanitizeName(k.Value) })
		case "kind":
			a.Kind, _ = d.strLazy(fv, func() string { return field("kind") }, func() string { return "valid: " + strings.Join(Kinds, ", ") })
		case "capabilities":
			a.CapabilitiesPos = pos(fv)
			a.Capabilities = d.capabilities(fv, field("capabilities"))
		case "triggers":
			a.TriggersPos = pos(fk)
			a.Triggers = d.triggers(fv, who)
		case "timeout":
			a.Timeout = d.integer(fv, field("timeout"), "minutes", "e.g. timeout: 30", fmt.Sprintf("give minutes from 1 to %d", MaxTimeout))
		case "review":
			a.Review, _ = d.strLazy(fv, func() string { return field("review") }, func() string { return "name the reviewing actor, e.g. review: reviewer" })
		case "result":
			a.Result = d.result(fv, who)
		case "execution":
			if d.mapping(fv, field("execution"), "e.g. execution: { workspace: isolated }") {
				e := &Execution{Pos: pos(fk)}
				d.fields(fv, field("execution"), executionKeys, func(_ string, _, wv *yaml.Node) {
					e.Workspace, _ = d.strLazy(wv, func() string { return field("execution.workspace") }, func() string { return "valid: " + strings.Join(Workspaces, ", ") })
				})
				a.Execution = e
			}
		case "prelaunch":
			a.Prelaunch, _ = d.strLazy(fv, func() string { return field("prelaunch") }, func() string { return "give the command to run, or remove prelaunch" })
		}
	})
	return a
}

func (d decoder) capabilities(n *yaml.Node, what string) []Capability {
	if n.Kind != yaml.SequenceNode {
		if isNull(n) {
			return nil // an actor may hold no capability at all
		}
		d.r.errorf(pos(n), "e.g. capabilities: [tasks:converse]", "%s must be a list, not %s", what, describe(n))
		return nil
	}
	out := make([]Capability, 0, len(n.Content))
	for _, item := range n.Content {
		if item.Kind == yaml.MappingNode && len(item.Content) == 2 {
			// `tasks: converse` (a space after the colon) is YAML for a mapping.
			d.r.errorf(pos(item), "write the capability without a space after the colon, e.g. "+item.Content[0].Value+":"+item.Content[1].Value, "%s: an entry must be a string, not a mapping", what)
			continue
		}
		c, ok := d.strLazy(item, func() string { return what + ": an entry" }, func() string { return "e.g. tasks:converse" })
		if !ok {
			continue
		}
		name, scope, _ := strings.Cut(c.Value, "@")
		out = append(out, Capability{Name: name, Scope: scope, Raw: c})
	}
	return out
}

func (d decoder) triggers(n *yaml.Node, who string) []*Trigger {
	const example = "e.g. triggers: [{ cron: \"0 9 * * 1-5\" }] or [{ dispatch: true }]"
	if n.Kind != yaml.SequenceNode {
		if isNull(n) {
			d.r.errorf(pos(n), "give at least one trigger, "+example, "%s: triggers has no value", who)
		} else {
			d.r.errorf(pos(n), example, "%s: triggers must be a list, not %s", who, describe(n))
		}
		return nil
	}
	if len(n.Content) == 0 {
		d.r.errorf(pos(n), "give at least one trigger, "+example, "%s: triggers is empty", who)
	}
	out := make([]*Trigger, 0, len(n.Content))
	for _, t := range n.Content {
		if tr := d.trigger(t, who); tr != nil {
			out = append(out, tr)
		}
	}
	return out
}

// trigger decodes one trigger; it returns nil for a trigger that is not even a mapping.
func (d decoder) trigger(n *yaml.Node, who string) *Trigger {
	field := func(name string) string { return who + ": trigger " + name }
	if !d.mapping(n, who+": a trigger", "e.g. { cron: \"0 9 * * *\" }, { event: issue_comment } or { dispatch: true }") {
		return nil
	}
	t := &Trigger{Pos: pos(n)}
	t.typos = d.fields(n, "a trigger of "+who, triggerKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "cron":
			t.Cron, _ = d.strLazy(v, func() string { return field("cron") }, func() string { return "e.g. cron: \"0 9 * * 1-5\"" })
			t.cronAt = cronStart(v)
		case "event":
			t.Event, _ = d.strLazy(v, func() string { return field("event") }, func() string { return "e.g. event: issue_comment" })
		case "config":
			if d.mapping(v, field("config"), "e.g. config: { types: [created] }") {
				t.Config = v
			}
		case "dispatch":
			t.Dispatch = String{"true", pos(v)}
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
				d.r.errorf(pos(v), "write dispatch: true", "%s must be true, not %s", field("dispatch"), describe(v))
			} else if b, _ := strconv.ParseBool(strings.ToLower(v.Value)); !b {
				t.Dispatch.Value = "false"
			}
		case "params":
			if !d.mapping(v, field("params"), "e.g. params: { ISSUE: subject.ref }") {
				return
			}
			t.Params = make([]Param, 0, len(v.Content)/2)
			for i := 0; i+1 < len(v.Content); i += 2 {
				name := v.Content[i].Value
				src, _ := d.strLazy(v.Content[i+1], func() string { return field("param " + strconv.Quote(name)) }, func() string { return "e.g. " + name + ": subject.ref" })
				t.Params = append(t.Params, Param{Name: String{name, pos(v.Content[i])}, Source: src})
			}
		}
	})
	return t
}

// cronStart returns where the text of a cron scalar starts, when field offsets inside the value map
// one to one onto columns of the file: plain and quoted single-line scalars without escapes.
func cronStart(n *yaml.Node) Pos {
	switch {
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return Pos{}
	case n.Style&yaml.DoubleQuotedStyle != 0 && strings.ContainsAny(n.Value, "\\\"\t\n\r"):
		return Pos{}
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		return Pos{n.Line, n.Column + 1}
	case strings.ContainsAny(n.Value, "\n"):
		return Pos{}
	}
	return pos(n)
}

func (d decoder) result(n *yaml.Node, who string) *Result {
	const example = "e.g. result: { schema: " + ReviewContract + " }"
	if !d.mapping(n, who+": result", example) {
		return nil
	}
	res := &Result{Pos: pos(n)}
	d.fields(n, who+": result", resultKeys, func(_ string, _, v *yaml.Node) {
		switch {
		case v.Kind == yaml.MappingNode:
			res.Inline, res.InlinePos, res.inline = toJSONValue(v), pos(v), v
		case v.Kind == yaml.ScalarNode && v.Tag == "!!str":
			res.Named, _ = d.str(v, who+": result.schema", "name a contract ("+ReviewContract+") or write an inline JSON Schema mapping")
		default:
			d.r.errorf(pos(v), "name a contract ("+ReviewContract+") or write an inline JSON Schema mapping", "%s: result.schema must be a contract name or a JSON Schema mapping, not %s", who, describe(v))
			res.Named.Pos = pos(v)
		}
	})
	if !res.Named.Pos.IsSet() && res.inline == nil {
		d.r.errorf(res.Pos, example, "%s: result has no schema", who)
	}
	return res
}

func (d decoder) policy(n *yaml.Node) Policy {
	p := Policy{Pos: pos(n)}
	if !d.mapping(n, "policy", "e.g. policy: { maxConcurrent: 3, box: {} }") {
		return p
	}
	d.fields(n, "policy", policyKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "maxConcurrent":
			p.MaxConcurrent = d.integer(v, "policy.maxConcurrent", "", "e.g. maxConcurrent: 3", maxConcurrentRange)
		case "box":
			if !d.mapping(v, "policy.box", "e.g. box: { taskStates: { open: triage } }") {
				return
			}
			p.Box = v
			for i := 0; i+1 < len(v.Content); i += 2 {
				d.boxKey(&p, v.Content[i], v.Content[i+1])
			}
		}
	})
	return p
}

// boxKey type-checks the keys of policy.box this tool owns; every other key is carried verbatim.
func (d decoder) boxKey(p *Policy, k, v *yaml.Node) {
	if isNull(v) && contains(boxKeys(), k.Value) {
		return // a null value means "not set"
	}
	key := k.Value
	if contains(ownedBoxKeys(), key) {
		d.boxSection(key, v)
		return
	}
	switch key {
	case "taskStates":
		if !d.mapping(v, "policy.box.taskStates", "e.g. taskStates: { ready: ready, done: done }") {
			return
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			state := v.Content[i]
			if isNull(v.Content[i+1]) {
				continue // not set: the state keeps the standard's name
			}
			label, _ := d.str(v.Content[i+1], "policy.box.taskStates."+state.Value, "give the tracker's name for "+state.Value+", or remove it")
			p.TaskStates = append(p.TaskStates, TaskState{Key: String{state.Value, pos(state)}, Label: label})
		}
	case "human", "autonomy", "tracker":
		d.boxSection(key, v)
	case "mcp":
		d.boxMCP(p, v)
	case "cli":
		d.boxCLI(p, v) // cli.go
	case "web":
		d.boxWeb(p, v) // cli.go
	case "risk":
		if !d.mapping(v, "policy.box.risk", "e.g. risk: { human_required_paths: [\".github/workflows/**\"] }") {
			return
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			if v.Content[i].Value == "human_required_paths" && !isNull(v.Content[i+1]) {
				for _, g := range d.strList(v.Content[i+1], "policy.box.risk.human_required_paths", "e.g. human_required_paths: [\".github/workflows/**\"]", "") {
					// A glob that protects nothing it seems to leaves the maintainer's gate open.
					if why := mergecheck.Unread(g.Value); why != "" {
						d.r.errorf(g.Pos, "list each path it means instead: matching ignores case, so secrets/** covers Secrets/; a glob reads * ? ** and, as .gitignore does, a leading or trailing /",
							"human_required_paths entry %q protects nothing it seems to: %s", g.Value, why)
					}
				}
			}
		}
	default:
		// Other keys are governance data carried verbatim; a near miss of a key this tool reads
		// would silently not be read.
		if near := nearest(key, boxKeys()); near != "" {
			d.r.warnf(pos(k), fmt.Sprintf("did you mean %q?", near), "policy.box.%s is carried verbatim and read by nothing", key)
		}
	}
}

func (d decoder) documents(n *yaml.Node) *Documents {
	const example = "e.g. roles: { vision: docs/VISION.md }"
	docs := &Documents{Pos: pos(n)}
	if !d.mapping(n, "documents", "e.g. documents: { roles: { vision: docs/VISION.md } }") {
		return docs
	}
	d.fields(n, "documents", documentsKeys, func(_ string, k, v *yaml.Node) {
		if !d.mapping(v, "documents.roles", example) {
			return
		}
		docs.RolesPos = pos(k)
		d.fields(v, "documents.roles", Roles, func(role string, rk, rv *yaml.Node) {
			path, _ := d.str(rv, "documents.roles."+role, "give the document's path, e.g. docs/"+strings.ToUpper(role)+".md")
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
			if num := strings.ReplaceAll(n.Value, "_", ""); json.Valid([]byte(num)) {
				return json.Number(num)
			}
		}
		return n.Value
	}
	return nil
}
