package kubernetes

import (
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time zones resolve the same on every machine

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// The defaults of policy.box.kubernetes (documented in docs/kubernetes.md).
const (
	DefaultNamespace = "autonomy"
	DefaultImage     = "autonomy-agent:latest"
	DefaultTimeZone  = "UTC"
	// DefaultKeepFinished is how long a session's Job, its record and result, outlives its end.
	DefaultKeepFinished = 24 * time.Hour
)

var boxKeys = []string{"namespace", "image", "resources", "nodeSelector", "timeZone", "egress", "agent", "model", "modelProxy", "keepFinished", "maxJobs", "maxAsks"}

// Box is policy.box.kubernetes: where and in what the fleet's sessions run.
type Box struct {
	Namespace string
	Image     string
	// Requests and Limits are resources.requests and resources.limits (cpu, memory,
	// ephemeral-storage), canonical quantities, over defaultRequests and defaultLimits.
	Requests, Limits map[string]resource.Quantity
	NodeSelector     map[string]string
	TimeZone         string
	// Egress is egress.allow: the networks a session may reach besides the model proxy and DNS.
	Egress []EgressRule
	// Agent is the preset a skill's session runs (policy.box.kubernetes.agent), Model the model
	// it asks for ("" for the preset's default), ModelProxy the model proxy's settings.
	Agent      agent.Preset
	Model      string
	ModelProxy ModelProxyBox
	// KeepFinished is how long a session's Job (and its pod, which holds the result) outlives the
	// session's end, in whole seconds (the Job's ttlSecondsAfterFinished); 0 keeps it until it is
	// deleted (keepFinished: forever).
	KeepFinished time.Duration
	// MaxJobs and MaxAsks are maxJobs and maxAsks, 0 when not set: the ResourceQuota's room for
	// the namespace's Jobs and asks (quota.go has their defaults).
	MaxJobs, MaxAsks int
}

// EgressRule is one egress.allow entry: a CIDR, and a TCP port or 0 for every port.
type EgressRule struct {
	CIDR string
	Port int
}

// ReadBox reads policy.box.kubernetes with its defaults filled in; every problem is a
// positioned diagnostic.
func ReadBox(p *ir.Profile) (Box, ir.Diagnostics) {
	def, _ := agent.Lookup(agent.Default)
	b := Box{Namespace: DefaultNamespace, Image: DefaultImage, TimeZone: DefaultTimeZone, Agent: def, ModelProxy: ModelProxyBox{Secret: DefaultModelSecret}, KeepFinished: DefaultKeepFinished,
		Requests: defaultQuantities(defaultRequests), Limits: defaultQuantities(defaultLimits)}
	b.ModelProxy.Requests, b.ModelProxy.Limits = defaultQuantities(defaultProxyRequests), defaultQuantities(defaultProxyLimits)
	r := &substrates.BoxReader{File: p.File, Prefix: "policy.box.kubernetes."}
	n := substrates.BoxNode(p, Name, Alias)
	if n == nil {
		return b, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			continue // null means "not set": the default stands
		}
		switch k.Value {
		case "namespace":
			if s, ok := r.Str(v, "namespace", "e.g. namespace: agents"); ok {
				if errs := validation.IsDNS1123Label(s); len(errs) > 0 {
					r.Errorf(v, "a DNS label: lowercase letters, digits and -, starting and ending with a letter or digit, at most 63 characters, e.g. namespace: agents", "namespace %q is not a namespace name", s)
				} else if sharedNamespace(s) {
					r.Errorf(v, "give the fleet a namespace of its own, e.g. namespace: agents", "namespace %q is not the fleet's alone: the install labels it for the restricted Pod Security standard, denies every pod in it all traffic but what its NetworkPolicies allow, and puts every ServiceAccount in it under the fleet's admission policies, which would break what else runs there", s)
				} else {
					b.Namespace = s
				}
			}
		case "image":
			if s, ok := r.Str(v, "image", "e.g. image: registry.example.com/autonomy-agent:v1"); ok {
				if strings.ContainsAny(s, " \t\n") {
					r.Errorf(v, "an image reference has no whitespace, e.g. image: registry.example.com/autonomy-agent:v1", "image %q is not an image reference", s)
				} else {
					b.Image = s
				}
			}
		case "resources":
			b.Requests, b.Limits = readResources(r, v, "resources", defaultRequests, defaultLimits)
		case "nodeSelector":
			b.NodeSelector = readNodeSelector(r, v)
		case "timeZone":
			if tz, ok := r.Str(v, "timeZone", "e.g. timeZone: Europe/Paris"); ok {
				if _, err := time.LoadLocation(tz); err != nil || tz == "Local" {
					r.Errorf(v, "use an IANA zone name such as UTC, Europe/Paris or America/New_York", "timeZone %q is not a known time zone", tz)
				} else {
					b.TimeZone = tz
				}
			}
		case "egress":
			b.Egress = readEgress(r, v)
		case "agent":
			b.Agent = readAgent(r, p, v)
		case "model":
			b.Model, _ = r.Str(v, "model", "e.g. model: gpt-5-codex")
		case "modelProxy":
			b.ModelProxy = readModelProxy(r, v)
		case "keepFinished":
			b.KeepFinished = readKeepFinished(r, v)
		case "maxJobs":
			b.MaxJobs, _ = r.Int(v, "maxJobs", "e.g. maxJobs: 2000", 1, maxQuotaCount)
		case "maxAsks":
			b.MaxAsks, _ = r.Int(v, "maxAsks", "e.g. maxAsks: 1000", 1, maxQuotaCount)
		default:
			r.NearMiss(k, boxKeys)
		}
	}
	return b, r.Diags
}

// The bounds of keepFinished: time to read a result, and a year (ttlSecondsAfterFinished is an
// int32 of seconds).
const (
	minKeepFinished = time.Minute
	maxKeepFinished = 365 * 24 * time.Hour
)

// readKeepFinished reads keepFinished: a duration in whole seconds between minKeepFinished and
// maxKeepFinished, or forever (0: no TTL); DefaultKeepFinished after an error.
func readKeepFinished(r *substrates.BoxReader, v *yaml.Node) time.Duration {
	const ex = "a duration such as 24h, 168h or 30m, between 1m and 8760h; or forever to keep every finished session until it is deleted"
	s, ok := r.Str(v, "keepFinished", ex)
	if !ok {
		return DefaultKeepFinished
	}
	if s == "forever" {
		return 0
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil || v.Tag != "!!str":
		r.Errorf(v, ex, "keepFinished %q is not a duration", s)
	case d%time.Second != 0:
		r.Errorf(v, ex, "keepFinished %q is not a whole number of seconds", s)
	case d < minKeepFinished || d > maxKeepFinished:
		r.Errorf(v, ex, "keepFinished %s is out of range", s)
	default:
		return d
	}
	return DefaultKeepFinished
}

// mapping reports whether v is a mapping, recording an error when it is not.
func mapping(r *substrates.BoxReader, v *yaml.Node, what, example string) bool {
	if v.Kind != yaml.MappingNode {
		r.Errorf(v, example, "%s must be a mapping", what)
		return false
	}
	return true
}

var resourceNames = []string{"cpu", "memory", "ephemeral-storage"}

// The session container's default requests and limits (policy.box.kubernetes.resources sets
// each of its own): a session is one agent CLI and the tools it runs, and without a limit one
// that runs away (a loop, a build, a leak) takes the node's every CPU and its memory from the
// other pods on it, or fills the node's disk (the kubelet evicts a pod past its
// ephemeral-storage limit). A session writes its git checkout, the agent CLI's cache and
// transcript, and what its tools build (dependencies, a build's output) into its container's
// writable layer: 20Gi holds a large repository with its dependencies and build, and the 2Gi
// request is what the scheduler sets aside for it on the node. A request above a default limit
// raises that limit to it, and a limit below a default request lowers that request to it.
var (
	defaultRequests = map[string]string{"cpu": "250m", "memory": "512Mi", "ephemeral-storage": "2Gi"}
	defaultLimits   = map[string]string{"cpu": "2", "memory": "2Gi", "ephemeral-storage": "20Gi"}
)

// The model proxy's default requests and limits (policy.box.kubernetes.modelProxy.resources):
// one Go process relaying the fleet's model requests, streaming each answer through, on a
// read-only root file system (its disk is its logs).
var (
	defaultProxyRequests = map[string]string{"cpu": "100m", "memory": "128Mi", "ephemeral-storage": "64Mi"}
	defaultProxyLimits   = map[string]string{"cpu": "1", "memory": "512Mi", "ephemeral-storage": "1Gi"}
)

// defaultQuantities is defaults parsed.
func defaultQuantities(defaults map[string]string) map[string]resource.Quantity {
	out := map[string]resource.Quantity{}
	for k, v := range defaults {
		out[k] = resource.MustParse(v)
	}
	return out
}

// readResources reads the key what (resources, modelProxy.resources): {requests: {cpu: 500m,
// memory: 1Gi}, limits: {...}}, over defReq and defLim: a request above its limit is an error
// when the profile sets both, raises the default limit when it sets the request only, and is
// lowered to the limit when it sets the limit only.
func readResources(r *substrates.BoxReader, v *yaml.Node, what string, defReq, defLim map[string]string) (req, lim map[string]resource.Quantity) {
	ex := "e.g. " + what + ": {requests: {cpu: 500m, memory: 1Gi}, limits: {memory: 2Gi}}"
	req, lim = defaultQuantities(defReq), defaultQuantities(defLim)
	if !mapping(r, v, what, ex) {
		return req, lim
	}
	reqNodes, limNodes := map[string]*yaml.Node{}, map[string]*yaml.Node{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, q := v.Content[i], v.Content[i+1]
		switch k.Value {
		case "requests":
			readQuantities(r, q, what+".requests", ex, req, reqNodes)
		case "limits":
			readQuantities(r, q, what+".limits", ex, lim, limNodes)
		default:
			r.Errorf(k, ex, "%s.%s is not a key: %s has requests and limits", what, k.Value, what)
		}
	}
	for _, name := range resourceNames {
		rq, hasReq := req[name]
		l, hasLim := lim[name]
		if !hasReq || !hasLim || rq.Cmp(l) <= 0 {
			continue
		}
		switch {
		case limNodes[name] == nil:
			lim[name] = rq // the default limit is below the request the profile asks for
		case reqNodes[name] == nil:
			req[name] = l // the default request is above the limit the profile sets
		default:
			r.Errorf(reqNodes[name], "a request is at most its limit: lower it, or raise "+what+".limits."+name, "%s.requests.%s %s is above %s.limits.%s %s", what, name, rq.String(), what, name, l.String())
		}
	}
	return req, lim
}

// readQuantities reads the mapping v of resource names to quantities into out, and each value's
// node into nodes.
func readQuantities(r *substrates.BoxReader, v *yaml.Node, what, ex string, out map[string]resource.Quantity, nodes map[string]*yaml.Node) {
	if !mapping(r, v, what, ex) {
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, q := v.Content[i], v.Content[i+1]
		if !contains(resourceNames, k.Value) {
			r.Errorf(k, "one of "+strings.Join(resourceNames, ", "), "%s.%s is not a resource", what, k.Value)
			continue
		}
		qty, err := resource.ParseQuantity(q.Value)
		if q.Kind != yaml.ScalarNode || err != nil || qty.Sign() < 0 {
			r.Errorf(q, "a quantity such as 500m, 2 or 1Gi", "%s.%s %q is not a quantity", what, k.Value, q.Value)
			continue
		}
		out[k.Value], nodes[k.Value] = qty, q
	}
}

func readNodeSelector(r *substrates.BoxReader, v *yaml.Node) map[string]string {
	const ex = "e.g. nodeSelector: {kubernetes.io/arch: amd64}"
	if !mapping(r, v, "nodeSelector", ex) {
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if errs := validation.IsQualifiedName(k.Value); len(errs) > 0 {
			r.Errorf(k, ex, "nodeSelector key %q is not a label key: %s", k.Value, errs[0])
			continue
		}
		if errs := validation.IsValidLabelValue(val.Value); val.Kind != yaml.ScalarNode || len(errs) > 0 {
			r.Errorf(val, ex, "nodeSelector.%s %q is not a label value", k.Value, val.Value)
			continue
		}
		out[k.Value] = val.Value
	}
	return out
}

// readEgress reads egress: {allow: [10.0.0.0/8, 192.0.2.10/32:443]}. A NetworkPolicy selects
// networks, not host names, so an entry is a CIDR with an optional TCP port.
func readEgress(r *substrates.BoxReader, v *yaml.Node) []EgressRule {
	const ex = "e.g. egress: {allow: [192.0.2.0/24, 198.51.100.7/32:443]}"
	if !mapping(r, v, "egress", ex) {
		return nil
	}
	var out []EgressRule
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, list := v.Content[i], v.Content[i+1]
		if k.Value != "allow" {
			r.Errorf(k, ex, "egress.%s is not a key: egress has allow", k.Value)
			continue
		}
		if list.Kind != yaml.SequenceNode {
			r.Errorf(list, ex, "egress.allow must be a list")
			continue
		}
		for _, e := range list.Content {
			if rule, ok := readEgressRule(r, e, "egress.allow", ex); ok {
				out = append(out, rule)
			}
		}
	}
	sortEgress(out)
	return out
}

// sortEgress orders rules by CIDR, then port: the output does not depend on the profile's order.
func sortEgress(out []EgressRule) {
	sort.Slice(out, func(i, j int) bool {
		if out[i].CIDR != out[j].CIDR {
			return out[i].CIDR < out[j].CIDR
		}
		return out[i].Port < out[j].Port
	})
}

// readEgressRule reads one entry of the list what (egress.allow, modelProxy.egress).
func readEgressRule(r *substrates.BoxReader, e *yaml.Node, what, ex string) (EgressRule, bool) {
	s := e.Value
	cidr, port := s, 0
	if slash, i := strings.Index(s, "/"), strings.LastIndex(s, ":"); slash >= 0 && i > slash {
		cidr = s[:i]
		n, err := strconv.Atoi(s[i+1:])
		if err != nil || n < 1 || n > 65535 {
			r.Errorf(e, ex+": a port is 1 to 65535", "%s %q has no valid port", what, e.Value)
			return EgressRule{}, false
		}
		port = n
	}
	pfx, err := netip.ParsePrefix(cidr)
	if e.Kind != yaml.ScalarNode || err != nil || pfx != pfx.Masked() {
		r.Errorf(e, ex+": a NetworkPolicy allows networks (CIDRs), not host names", "%s %q is not a CIDR", what, e.Value)
		return EgressRule{}, false
	}
	return EgressRule{CIDR: pfx.String(), Port: port}, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sharedNamespace reports the namespaces a cluster's own components and every user share:
// default (where whatever names no namespace lands: a cluster administrator expects nothing
// there to be fenced), kube-system, kube-public, kube-node-lease and any other kube-*, and
// OpenShift's own, openshift and openshift-*.
func sharedNamespace(ns string) bool {
	return ns == "default" || strings.HasPrefix(ns, "kube-") || ns == "openshift" || strings.HasPrefix(ns, "openshift-")
}
