package kubernetes

import (
	"net/url"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// DefaultModelSecret is the Secret the model proxy reads the model credential from, unless
// policy.box.kubernetes.modelProxy.secret names another.
const DefaultModelSecret = "autonomy-model"

// ModelProxyBox is policy.box.kubernetes.modelProxy: where the model proxy's Deployment finds
// the real credential and the model, and the networks it may reach.
type ModelProxyBox struct {
	// Secret is the Secret holding the credential, under the preset's CredentialEnv as its key.
	Secret string
	// Upstream is the model endpoint's origin ("" for the preset's public API).
	Upstream string
	// Egress are the networks the proxy may reach (besides the cluster DNS); nil for every
	// public address on port 443 (no private, loopback or link-local network).
	Egress []EgressRule
	// Requests and Limits are resources.requests and resources.limits of the proxy's container,
	// over defaultProxyRequests and defaultProxyLimits.
	Requests, Limits map[string]resource.Quantity
}

// readAgent reads policy.box.kubernetes.agent: a preset, as on the other targets; an explicit
// command is refused, since the image holds the pinned presets only.
func readAgent(r *substrates.BoxReader, p *ir.Profile, v *yaml.Node) agent.Preset {
	c, probs := agent.Parse(v)
	for _, pr := range probs {
		if pr.Warning {
			r.Diags = append(r.Diags, ir.Diagnostic{File: p.File, Pos: ir.Pos{Line: pr.Node.Line, Col: pr.Node.Column}, Severity: ir.Warning, Message: r.Prefix + pr.Message, Hint: pr.Hint})
		} else {
			r.Errorf(pr.Node, pr.Hint, "%s", pr.Message)
		}
	}
	if c.Custom() {
		r.Errorf(v, "name a preset (codex or claude), which the image holds at its pinned version", "agent: an explicit command is not supported on kubernetes")
		def, _ := agent.Lookup(agent.Default)
		return def
	}
	return c.Preset
}

// readModelProxy reads modelProxy: {secret: NAME, upstream: URL, egress: [CIDR[:PORT], ...],
// resources: {requests: {...}, limits: {...}}}.
func readModelProxy(r *substrates.BoxReader, v *yaml.Node) ModelProxyBox {
	const ex = "e.g. modelProxy: {secret: autonomy-model, upstream: https://api.openai.com, egress: [203.0.113.0/24:443]}"
	b := ModelProxyBox{Secret: DefaultModelSecret, Requests: defaultQuantities(defaultProxyRequests), Limits: defaultQuantities(defaultProxyLimits)}
	if !mapping(r, v, "modelProxy", ex) {
		return b
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		switch k.Value {
		case "secret":
			if s, ok := r.Str(val, "modelProxy.secret", ex); ok {
				if errs := validation.IsDNS1123Subdomain(s); len(errs) > 0 {
					r.Errorf(val, "a Secret name: lowercase letters, digits, - and ., e.g. secret: autonomy-model", "modelProxy.secret %q is not a Secret name", s)
				} else {
					b.Secret = s
				}
			}
		case "upstream":
			if s, ok := r.Str(val, "modelProxy.upstream", ex); ok {
				if u, err := url.Parse(s); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
					r.Errorf(val, "the model endpoint's origin and optional path, e.g. upstream: https://api.openai.com", "modelProxy.upstream %q is not an http(s) URL", s)
				} else {
					b.Upstream = s
				}
			}
		case "egress":
			if val.Kind != yaml.SequenceNode {
				r.Errorf(val, ex, "modelProxy.egress must be a list")
				continue
			}
			b.Egress = []EgressRule{}
			for _, e := range val.Content {
				if rule, ok := readEgressRule(r, e, "modelProxy.egress", ex); ok {
					b.Egress = append(b.Egress, rule)
				}
			}
			sortEgress(b.Egress)
		case "resources":
			b.Requests, b.Limits = readResources(r, val, "modelProxy.resources", defaultProxyRequests, defaultProxyLimits)
		default:
			r.Errorf(k, ex, "modelProxy.%s is not a key: modelProxy has secret, upstream, egress and resources", k.Value)
		}
	}
	return b
}
