package kubernetes

import (
	"bytes"
	"encoding/json"
	"fmt"

	"gopkg.in/yaml.v3"
)

// documents writes objects as one multi-document YAML stream. An object goes through its JSON
// form (the API's own field names and order, from k8s.io/api's types), then through yaml.v3,
// dropping what JSON writes for an unset field (null, {}): the bytes depend only on the objects.
// maxObjectBytes bounds one object of the manifests, as JSON: etcd takes at most 1.5 MiB in one
// request by default.
const maxObjectBytes = 1536 << 10

func documents(objs ...any) ([]byte, error) {
	var b bytes.Buffer
	for i, o := range objs {
		js, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		if len(js) > maxObjectBytes {
			var m struct {
				Kind     string
				Metadata struct{ Name string }
			}
			_ = json.Unmarshal(js, &m)
			return nil, fmt.Errorf("the %s %s would be %d KiB, more than the %d KiB the API server's store takes in one object: the fleet has too many actors, capabilities or files for one namespace; split it into fleets of their own", m.Kind, m.Metadata.Name, len(js)>>10, maxObjectBytes>>10)
		}
		var n yaml.Node
		if err := yaml.Unmarshal(js, &n); err != nil {
			return nil, err
		}
		prune(&n)
		plainStyle(&n)
		apiVersionFirst(&n)
		if i > 0 {
			b.WriteString("---\n")
		}
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(&n); err != nil {
			return nil, fmt.Errorf("writing a manifest: %v", err)
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// prune removes the members of every mapping whose value is null or an empty mapping, and
// reports whether n itself is then empty.
func prune(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			prune(c)
		}
	case yaml.MappingNode:
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" || prune(v) {
				continue
			}
			kept = append(kept, k, v)
		}
		n.Content = kept
		return len(kept) == 0
	case yaml.SequenceNode:
		for _, c := range n.Content {
			prune(c)
		}
	}
	return false
}

// plainStyle writes scalars and collections in block style, quoting only what must be quoted.
func plainStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		plainStyle(c)
	}
}

// apiVersionFirst moves a top-level apiVersion before kind, where every manifest writes it
// (TypeMeta's JSON writes kind first).
func apiVersionFirst(n *yaml.Node) {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	c := n.Content
	if n.Kind == yaml.MappingNode && len(c) >= 4 && c[0].Value == "kind" && c[2].Value == "apiVersion" {
		c[0], c[1], c[2], c[3] = c[2], c[3], c[0], c[1]
	}
}
