package ghactions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// filterKeys are the event config keys that narrow when an event fires; a trigger without one
// fires on everything it would filter, so a union drops it.
var filterKeys = map[string]bool{
	"types": true, "branches": true, "branches-ignore": true, "tags": true, "tags-ignore": true,
	"paths": true, "paths-ignore": true, "workflows": false, "names": true, "versions": true,
}

// mergeConfigs merges the configs of triggers on one event: list values are unioned in order of
// first appearance, mappings merged key by key; a filter one trigger leaves out is dropped, since
// that trigger fires without it. Configs are the profile's nodes, carried verbatim.
func mergeConfigs(configs []*yaml.Node) any {
	var out any
	for i, n := range configs {
		var v any = nil
		if n != nil {
			v = fromNode(n)
		}
		if i == 0 {
			out = v
			continue
		}
		out = mergeValue(out, v, true)
	}
	if m, ok := out.(mapping); ok && len(m) == 0 {
		return nil
	}
	return out
}

func mergeValue(a, b any, top bool) any {
	am, aok := a.(mapping)
	bm, bok := b.(mapping)
	if top && (a == nil || b == nil) {
		// One trigger has no config: it fires on every activity; keep only non-filter keys.
		other := am
		if a == nil {
			other = bm
		}
		var kept mapping
		for _, e := range other {
			if !filterKeys[e.key] {
				kept = append(kept, e)
			}
		}
		return kept
	}
	if aok && bok {
		out := mapping{}
		for _, e := range am {
			if v, ok := bm.get(e.key); ok {
				if top && strings.HasSuffix(e.key, "-ignore") {
					// Either trigger fires unless its own list excludes the ref: only what both
					// exclude stays excluded.
					if both := intersect(e.value, v); len(both) > 0 {
						out = append(out, kv{key: e.key, value: both})
					}
					continue
				}
				out = append(out, kv{key: e.key, value: mergeValue(e.value, v, false)})
			} else if !filterKeys[e.key] || !top {
				out = append(out, e)
			}
		}
		for _, e := range bm {
			if _, ok := am.get(e.key); !ok && (!filterKeys[e.key] || !top) {
				out = append(out, e)
			}
		}
		return out
	}
	as, aok := a.(seq)
	bs, bok := b.(seq)
	if aok && bok {
		out := append(seq{}, as...)
		for _, x := range bs {
			if !seqHas(out, x) {
				out = append(out, x)
			}
		}
		return out
	}
	return a // two different scalars: the first trigger's value stands
}

// intersect keeps the items of list a that list b also holds.
func intersect(a, b any) seq {
	as, _ := a.(seq)
	bs, _ := b.(seq)
	var out seq
	for _, x := range as {
		if seqHas(bs, x) {
			out = append(out, x)
		}
	}
	return out
}

func seqHas(s seq, x any) bool {
	for _, y := range s {
		if fmt.Sprint(y) == fmt.Sprint(x) {
			return true
		}
	}
	return false
}

// humanPathsDoc is HumanRequiredPath: the profile's policy.box.risk.human_required_paths
// verbatim, and the governing documents the gate holds beside them (effect.Env reads both).
type humanPathsDoc struct {
	Paths     []string `json:"human_required_paths"`
	Governing []string `json:"governing_documents,omitempty"`
}

// gated reports whether the human gate holds any path: a human-required path or a governing
// document.
func (c *compiler) gated() bool { return len(c.humanPaths) > 0 || len(c.governing) > 0 }

// json adds a generated JSON file.
func (c *compiler) json(path, producer string, v any) {
	if c.list {
		c.add(substrates.File{Path: path, Mode: 0o644, Header: substrates.JSONHeader}, producer, ir.Pos{})
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(err) // only this package's own types are encoded
	}
	c.add(substrates.File{Path: path, Data: buf.Bytes(), Mode: 0o644, Header: substrates.JSONHeader}, producer, ir.Pos{})
}

// resultPath is where an actor's declared result contract is installed ("" when it declares
// none, or opts out).
func resultPath(a *ir.Actor) string {
	switch {
	case a.Result == nil || a.ExitStatusOnly():
		return ""
	case a.Result.Named.Value != "":
		name := a.Result.Named.Value
		return resultsDir + "/" + name + ".json"
	case a.Result.Inline != nil:
		return resultsDir + "/" + a.Name.Value + ".json"
	}
	return ""
}

// resultSchema installs the actor's result contract for its tooling to validate against.
func (c *compiler) resultSchema(a *ir.Actor, path string) {
	if a.Result.Named.Value != "" {
		name := a.Result.Named.Value
		c.add(substrates.File{Path: path, Data: []byte(ir.ResultContracts[name] + "\n"), Mode: 0o644, Header: substrates.JSONHeader}, "the result contract "+name, a.Result.Pos)
		return
	}
	c.json(path, fmt.Sprintf("the result schema of actor %q", a.Name.Value), a.Result.Inline)
}

// actorManifest is one actor in .autonomy/gh-actions/manifest.json.
type actorManifest struct {
	Name         string      `json:"name"`
	Kind         string      `json:"kind"`
	Workflow     string      `json:"workflow"`
	Behavior     string      `json:"behavior"`
	Capabilities []string    `json:"capabilities"`
	Permissions  Permissions `json:"permissions"`
	// Effects are the trusted jobs after the agent job ("propose", "review", "apply"), by job id.
	Effects  []string  `json:"effects,omitempty"`
	Triggers []trigger `json:"triggers"`
	// applyGrant is what its apply job may do (it depends on the actor's capabilities).
	applyGrant Permissions
	Params     []param `json:"params"`
	Reviewer   string  `json:"reviewer,omitempty"`
	Timeout    int     `json:"timeoutMinutes,omitempty"`
	// Result is the named result contract the apply job verifies a session delivered (the
	// default, ir.DefaultContract, or a declared one), "" when no trusted job verifies one there.
	Result string `json:"result,omitempty"`
	// ResultSchema is, for an inline result schema the apply job verifies, where it is installed.
	ResultSchema string `json:"resultSchema,omitempty"`
	// Environments are the GitHub environments gating the approval steps of a workflow
	// playbook (autonomy provision creates them).
	Environments []string `json:"environments,omitempty"`
	// Elicits is set for an actor whose step playbook asks a person: the control workflow
	// resumes its run once its ask is answered.
	Elicits bool `json:"elicits,omitempty"`
	// shape is the shape Triggers and Params are of (shape.go), nil when they are the actor's own.
	shape    *shape
	Warnings []string `json:"warnings"`
}

type trigger struct {
	Kind   string   `json:"kind"`
	Cron   string   `json:"cron,omitempty"`
	Event  string   `json:"event,omitempty"`
	On     string   `json:"on"`
	Params []string `json:"params"`
}

func triggerManifest(a *ir.Actor) []trigger {
	out := make([]trigger, 0, len(a.Triggers))
	for _, t := range a.Triggers {
		tr := trigger{Kind: string(t.Kind), Cron: t.Cron.Value, Event: t.Event.Value, On: firing(t), Params: []string{}}
		for _, p := range t.Params {
			tr.Params = append(tr.Params, p.Name.Value)
		}
		out = append(out, tr)
	}
	return out
}

// warnedActor returns the actor a warning names first: every actor warning starts with
// actor "<name>" (or human actor "<name>").
func warnedActor(msg string) (string, bool) {
	msg = strings.TrimPrefix(msg, "human ")
	if !strings.HasPrefix(msg, `actor "`) {
		return "", false
	}
	rest := msg[len(`actor "`):]
	end := strings.IndexByte(rest, '"')
	if end < 0 {
		return "", false
	}
	return rest[:end], true
}
