package substrates

import (
	"bytes"
	"encoding/json"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
)

// PolicyPath is where both substrates install the profile's policy block for the agents: the
// governance knobs skills read (max_develop_attempts, the tracker's settings, …), carried whole.
const PolicyPath = ".autonomy/policy.json"

// GoverningDocumentsKey is the member of PolicyPath listing the governing documents (the
// vision and constitution of documents.roles) that the human gate holds beside
// policy.box.risk.human_required_paths.
const GoverningDocumentsKey = "governingDocuments"

// PolicyEnv is the env var that gives an agent the path of PolicyPath.
const PolicyEnv = "AUTONOMY_POLICY"

// PolicyFile is the profile's whole policy block as JSON, in the order the profile wrote it:
// maxConcurrent and box, every key of box carried (a key nothing reads is never refused), a null
// value left out (null means "not set"), policy.box.risk.human_required_paths verbatim (never
// augmented), and, when the profile declares any, the governing documents the human gate also
// holds as their own member, governingDocuments (ir.Profile.GoverningDocuments).
func PolicyFile(p *ir.Profile) File {
	var b bytes.Buffer
	b.WriteString("{\n")
	first := true
	member := func(key string) {
		if !first {
			b.WriteString(",\n")
		}
		first = false
		b.WriteString("  ")
		writeJSONString(&b, key)
		b.WriteString(": ")
	}
	if mc := p.Policy.MaxConcurrent; mc.Pos.IsSet() {
		member("maxConcurrent")
		b.WriteString(strings.TrimSpace(jsonText(mc.Value)))
	}
	member("box")
	box := p.Policy.Box
	if box == nil || box.Kind != yaml.MappingNode {
		box = &yaml.Node{Kind: yaml.MappingNode}
	}
	writePolicy(&b, box, 1)
	if docs := p.GoverningDocuments(); len(docs) > 0 {
		member(GoverningDocumentsKey)
		b.WriteString("[")
		for i, d := range docs {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSONString(&b, d)
		}
		b.WriteString("]")
	}
	b.WriteString("\n}\n")
	return File{Path: PolicyPath, Data: b.Bytes(), Mode: 0o644, Header: JSONHeader}
}

// writePolicy writes n as indented JSON, mapping keys in the profile's order and null mapping
// values left out.
func writePolicy(b *bytes.Buffer, n *yaml.Node, depth int) {
	indent := strings.Repeat("  ", depth)
	switch n.Kind {
	case yaml.MappingNode:
		var keys, vals []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if v := n.Content[i+1]; !(v.Kind == yaml.ScalarNode && v.Tag == "!!null") {
				keys, vals = append(keys, n.Content[i]), append(vals, v)
			}
		}
		if len(keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, k := range keys {
			b.WriteString(indent + "  ")
			writeJSONString(b, k.Value)
			b.WriteString(": ")
			writePolicy(b, vals[i], depth+1)
			if i < len(keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, c := range n.Content {
			b.WriteString(indent + "  ")
			writePolicy(b, c, depth+1)
			if i < len(n.Content)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	default:
		b.WriteString(strings.TrimSpace(jsonText(ir.JSONValue(n))))
	}
}

func writeJSONString(b *bytes.Buffer, s string) { b.WriteString(strings.TrimSpace(jsonText(s))) }

// jsonText encodes one JSON value without HTML escaping.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "null" // unreachable: only strings, numbers, booleans and nil reach here
	}
	return b.String()
}
