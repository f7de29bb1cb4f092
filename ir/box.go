package ir

import (
	"fmt"
	"regexp"
	"slices"
	"sync"

	"gopkg.in/yaml.v3"
)

// policy.box is opaque governance: it is carried whole to the agents (.autonomy/policy.json) and
// a key nothing reads is never refused. The keys below are the ones this tool, its substrates or
// the standard's realization read; each is type-checked, a null value means "not set", and a near
// miss of one draws a "did you mean" warning, since a misspelled key would silently not be read.
var boxSubKeys = map[string][]string{
	// The human seam: the repository variable listing the maintainers to engage, and the minutes
	// after which an unanswered ask is escalated.
	"human": {"maintainers_var", "sla_minutes"},
	// The propose effect's cap on the agent pull requests open at once; max_develop_attempts is
	// read by the reference's PM skill; keep lists the files of the repository whose own copy
	// compile keeps instead of failing (KeepPaths).
	"autonomy": {"max_open_agent_prs", "max_develop_attempts", "keep"},
}

var varNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// boxSection type-checks policy.box.human and policy.box.autonomy, and checks that the sections
// only agents read (tracker) and the registered targets' own (ir.RegisterTarget) are
// mappings. Keys inside a section nothing reads are carried verbatim.
func (d decoder) boxSection(key string, v *yaml.Node) {
	if isNull(v) {
		return // not set
	}
	if !d.mapping(v, "policy.box."+key, "e.g. "+key+": {}") {
		return
	}
	known, checked := boxSubKeys[key]
	if !checked {
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		what := "policy.box." + key + "." + k.Value
		if isNull(val) {
			continue
		}
		switch k.Value {
		case "maintainers_var":
			if s, ok := d.str(val, what, "name the repository variable, e.g. maintainers_var: PUBLIC_AGENT_MAINTAINERS"); ok && !varNameRe().MatchString(s.Value) {
				d.r.errorf(pos(val), "a variable name is letters, digits and _, not starting with a digit", "%s %q is not a variable name", what, s.Value)
			}
		case "sla_minutes", "max_open_agent_prs", "max_develop_attempts":
			if n := d.integer(val, what, "", "e.g. "+k.Value+": 5", "give a small positive number"); n.Pos.IsSet() && n.Value < 1 {
				d.r.errorf(n.Pos, "give 1 or more, or remove it", "%s %d must be at least 1", what, n.Value)
			}
		case "keep":
			d.keepList(val, what)
		default:
			if near := nearest(k.Value, known); near != "" && !slices.Contains(known, k.Value) {
				d.r.warnf(pos(k), fmt.Sprintf("did you mean %q?", near), "%s is carried verbatim and read by nothing", what)
			}
		}
	}
}

// keepList checks policy.box.autonomy.keep: a list of paths relative to the repository root.
func (d decoder) keepList(n *yaml.Node, what string) {
	for _, s := range d.strList(n, what, "e.g. keep: [.gitignore]", "") {
		if _, problem, hint := relPath(s.Value, "the repository root"); problem != "" {
			d.r.errorf(s.Pos, hint, "%s %q %s", what, s.Value, problem)
		}
	}
}

// KeepPaths is policy.box.autonomy.keep, cleaned: the files of the output directory that compile
// leaves alone when they already exist there with other content (the repository's own
// .gitignore, say) instead of refusing to install. Entries Validate rejects are left out.
func (p *Profile) KeepPaths() []string {
	n := boxChild(boxChild(p.Policy.Box, "autonomy"), "keep")
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	var out []string
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode || c.Tag != "!!str" {
			continue
		}
		if clean, problem, _ := relPath(c.Value, ""); problem == "" && !slices.Contains(out, clean) {
			out = append(out, clean)
		}
	}
	return out
}

// HumanRequiredPaths is policy.box.risk.human_required_paths, verbatim: the standard carries it
// "verbatim, never augmented". The governing documents are gated too, as their own list
// (GoverningDocuments).
func (p *Profile) HumanRequiredPaths() []string {
	var out []string
	if n := boxChild(boxChild(p.Policy.Box, "risk"), "human_required_paths"); n != nil && n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			if c.Kind == yaml.ScalarNode && !isNull(c) {
				out = append(out, c.Value)
			}
		}
	}
	return out
}

// GoverningDocuments are the documents declared for the vision and constitution roles, each
// once: no agent may silently rewrite the document its own proposals are judged against, so a
// change to one needs a maintainer as a human-required path does. The roadmap is not gated:
// keeping it current is what the strategist proposes.
func (p *Profile) GoverningDocuments() []string {
	var out []string
	if p.Documents == nil {
		return nil
	}
	for _, role := range []string{"vision", "constitution"} {
		for _, r := range p.Documents.Roles {
			if r.Name.Value == role && r.Path.Value != "" && !slices.Contains(out, r.Path.Value) {
				out = append(out, r.Path.Value)
			}
		}
	}
	return out
}

// boxChild returns the value of key in mapping n, or nil.
func boxChild(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// JSONValue converts a scalar, list or mapping of the profile to the value encoding/json writes
// for it (numbers as json.Number, so they are written as the profile wrote them).
func JSONValue(n *yaml.Node) any { return toJSONValue(n) }
