package ir

import (
	"gopkg.in/yaml.v3"
)

// normalizer rewrites a parsed YAML tree in place into plain mappings, sequences and scalars:
// aliases are replaced by the node they name (shared, not copied), merge keys (<<) are folded into
// their mapping, and duplicate keys are reported. Every node visited, including each visit through
// an alias, is charged to a budget, so an alias-expansion bomb is refused after bounded work and
// without allocating its expansion.
type normalizer struct {
	r      *reporter
	budget int
	failed bool
	// active holds the nodes on the current path, to refuse an alias that names its own ancestor.
	active map[*yaml.Node]bool
	// merging holds the mappings whose merge keys are being folded, to refuse a merge cycle.
	merging map[*yaml.Node]bool
	// done holds mappings whose keys were already checked, so a node shared through aliases is
	// checked once (it is still charged on every visit).
	done map[*yaml.Node]bool
	// shared is set when the document has aliases: only then can a node be reached twice, and
	// active and done are kept (a large profile usually has none and skips that bookkeeping).
	shared bool
}

// normalize rewrites the tree under root; it reports false after an error that leaves the tree
// unusable. The budget bounds the nodes the document may expand to: what it holds, plus a generous
// allowance for legitimate reuse (an anchor of defaults merged into every actor).
func normalize(r *reporter, root *yaml.Node) bool {
	n, aliases := countNodes(root)
	z := &normalizer{r: r, budget: 4*n + 1_000_000, shared: aliases}
	if aliases {
		z.active = map[*yaml.Node]bool{}
		z.done = map[*yaml.Node]bool{}
	}
	z.walk(root)
	return !z.failed
}

// countNodes counts the nodes of a tree as written (aliases not followed) and reports aliases.
func countNodes(n *yaml.Node) (count int, aliases bool) {
	count, aliases = 1, n.Kind == yaml.AliasNode
	for _, ch := range n.Content {
		c, a := countNodes(ch)
		count, aliases = count+c, aliases || a
	}
	return count, aliases
}

func (z *normalizer) walk(n *yaml.Node) {
	if z.failed {
		return
	}
	z.budget--
	if z.budget < 0 {
		z.failed = true
		z.r.errorf(pos(n), "write the values out, or reuse anchors less", "the YAML aliases expand to too many values (an alias expansion bomb?)")
		return
	}
	switch n.Kind {
	case yaml.SequenceNode:
		z.enter(n)
		for i, ch := range n.Content {
			n.Content[i] = z.follow(ch)
			z.walk(n.Content[i])
		}
		z.leave(n)
	case yaml.MappingNode:
		z.enter(n)
		if !z.done[n] {
			z.merge(n)
			z.checkKeys(n)
			if z.shared {
				z.done[n] = true
			}
		}
		for i := 1; i < len(n.Content) && !z.failed; i += 2 {
			n.Content[i] = z.follow(n.Content[i])
			z.walk(n.Content[i])
		}
		z.leave(n)
	}
}

func (z *normalizer) enter(n *yaml.Node) {
	if z.shared {
		z.active[n] = true
	}
}

func (z *normalizer) leave(n *yaml.Node) {
	if z.shared {
		delete(z.active, n)
	}
}

// follow resolves a child that may be an alias, refusing an alias to a node that contains it (its
// expansion would never end), at the alias.
func (z *normalizer) follow(n *yaml.Node) *yaml.Node {
	target := z.resolve(n)
	if z.active[target] && !z.failed {
		z.failed = true
		z.r.errorf(pos(n), "an anchor cannot contain an alias to itself", "the YAML alias refers to a value that contains it")
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: n.Line, Column: n.Column}
	}
	return target
}

// resolve follows an alias to the node it names.
func (z *normalizer) resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// merge folds the YAML merge keys of mapping n into it: keys written in n win over merged ones,
// and of several merged mappings the earlier wins, as the YAML merge-key spec says.
func (z *normalizer) merge(n *yaml.Node) {
	hasMerge := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		if isMergeKey(n.Content[i]) {
			hasMerge = true
			break
		}
	}
	if !hasMerge {
		return
	}
	if z.merging == nil {
		z.merging = map[*yaml.Node]bool{}
	}
	z.merging[n] = true
	defer delete(z.merging, n)
	var own, merged []*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !isMergeKey(k) {
			own = append(own, k, n.Content[i+1])
			seen[k.Value] = true
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !isMergeKey(k) {
			continue
		}
		v := z.resolve(n.Content[i+1])
		var sources []*yaml.Node
		switch v.Kind {
		case yaml.MappingNode:
			sources = []*yaml.Node{v}
		case yaml.SequenceNode:
			for _, s := range v.Content {
				sources = append(sources, z.resolve(s))
			}
		}
		for _, s := range sources {
			z.budget -= len(s.Content)
			if z.merging[s] || z.active[s] {
				z.failed = true
				z.r.errorf(pos(n.Content[i+1]), "an anchor cannot merge a mapping that contains it", "the YAML merge key refers to a mapping that contains it")
				return
			}
			if s.Kind != yaml.MappingNode {
				z.r.errorf(pos(s), "merge a mapping, e.g. <<: *defaults", "a merge key (<<) takes a mapping or a list of mappings, not %s", describe(s))
				continue
			}
			z.merge(s)
			for j := 0; j+1 < len(s.Content); j += 2 {
				if key := s.Content[j]; !seen[key.Value] {
					seen[key.Value] = true
					merged = append(merged, key, s.Content[j+1])
				}
			}
		}
		if len(sources) == 0 {
			z.r.errorf(pos(v), "merge a mapping, e.g. <<: *defaults", "a merge key (<<) takes a mapping or a list of mappings, not %s", describe(v))
		}
	}
	n.Content = append(own, merged...)
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "!!merge" || k.Tag == "")
}

// checkKeys reports keys that are not scalars and keys defined twice in one mapping, and drops the
// later definitions so the decoder reads each key once.
func (z *normalizer) checkKeys(n *yaml.Node) {
	keep := n.Content[:0]
	var first map[string]*yaml.Node
	if len(n.Content) > 16 {
		first = make(map[string]*yaml.Node, len(n.Content)/2)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := z.resolve(n.Content[i])
		n.Content[i] = k
		if k.Kind != yaml.ScalarNode {
			z.r.errorf(pos(k), "use a plain name as the key", "a mapping key must be a scalar, not %s", describe(k))
			continue
		}
		v := n.Content[i+1]
		var prev *yaml.Node
		if first != nil {
			prev = first[k.Value]
			if prev == nil {
				first[k.Value] = k
			}
		} else {
			for j := 0; j < len(keep); j += 2 {
				if keep[j].Value == k.Value {
					prev = keep[j]
					break
				}
			}
		}
		if prev != nil {
			z.r.errorf(pos(k), "remove one of them", "key %q is defined twice, first at %s", k.Value, firstAt(pos(prev), pos(k)))
			continue
		}
		keep = append(keep, k, v)
	}
	n.Content = keep
}

// describe names the kind of a node for error messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "an empty value"
		case "!!bool":
			return "the boolean " + n.Value
		case "!!int":
			return "the integer " + n.Value
		case "!!float":
			return "the number " + n.Value
		case "!!str":
			return "a string"
		}
		return "a value of type " + n.Tag
	}
	return "nothing"
}
