package substrates

import (
	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/egress"
)

// EgressExample shows policy.box.<target>.egress in a hint.
const EgressExample = `e.g. egress: { allow: [registry.npmjs.org, "*.pythonhosted.org", "proxy.example.com:8443"] }`

// ReadEgress reads policy.box.<target>.egress: { allow: [HOST, ...] }, the hosts a sandboxed
// agent reaches through the substrate's egress proxy besides the model proxy (internal/egress:
// an exact host or *.domain, port 443 unless one is given). errorf records an error at a node,
// prefixed with the target's key. What is read is returned as written, in order; a bad entry
// is left out, with its error.
func ReadEgress(v *yaml.Node, errorf func(n *yaml.Node, hint, format string, args ...any)) []egress.Rule {
	if v.Kind != yaml.MappingNode {
		errorf(v, EgressExample, "egress must be a mapping")
		return nil
	}
	var out []egress.Rule
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if k.Value != "allow" {
			errorf(k, "egress has one key: allow, a list of hosts", "egress.%s is not an egress setting", k.Value)
			continue
		}
		if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
			continue
		}
		if val.Kind != yaml.SequenceNode {
			errorf(val, EgressExample, "egress.allow must be a list of hosts")
			continue
		}
		for _, h := range val.Content {
			if h.Kind != yaml.ScalarNode || h.Tag != "!!str" {
				errorf(h, EgressExample, "egress.allow: each entry is a host name, as a string")
				continue
			}
			r, err := egress.ParseRule(h.Value)
			if err != nil {
				errorf(h, "a host (registry.npmjs.org), a domain's subdomains (*.pythonhosted.org), optionally :port (443 otherwise)", "egress.allow: %v", err)
				continue
			}
			out = append(out, r)
		}
	}
	return out
}

// EgressStrings is rules as written, for a config file or a command line (nil for none).
func EgressStrings(rules []egress.Rule) []string {
	var out []string
	for _, r := range rules {
		out = append(out, r.String())
	}
	return out
}
