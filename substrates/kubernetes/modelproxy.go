package kubernetes

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"github.com/autonomyhq/autonomy/ir"
)

// The model proxy of a fleet with a skill: a Deployment running ModelProxyArgs from the fleet's
// image, which holds the real model credential (read from the Secret policy.box.kubernetes
// .modelProxy.secret names, under the preset's credential name as its key), and a Service in
// front of it. A skill's session pod gets the Service's URL and a placeholder key, never the
// credential (docs/kubernetes.md, "The model proxy").

// ModelProxyName names the model proxy's Deployment, Service and ServiceAccount.
const ModelProxyName = "autonomy-model-proxy"

// ModelProxyArgs is what the model proxy's container runs: its serve entry point (proxy.go).
var ModelProxyArgs = []string{"autonomy", "runner", "--target", Name, "model-proxy"}

// The env of the model proxy's container (and, EnvModelURL and EnvModelKey, of a skill's
// session container, which the session entry point hands the agent CLI under its own names).
const (
	// EnvModelAPI is the API the proxy serves: "openai" or "anthropic".
	EnvModelAPI = "AUTONOMY_MODEL_API"
	// EnvModelUpstream is the model endpoint the proxy forwards to ("" for the public API).
	EnvModelUpstream = "AUTONOMY_MODEL_UPSTREAM"
	// EnvModelCredential is the real credential, from the Secret (the proxy's container only).
	EnvModelCredential = "AUTONOMY_MODEL_CREDENTIAL"
	// EnvModelListen is the address the proxy listens on (":8787" when unset).
	EnvModelListen = "AUTONOMY_MODEL_LISTEN"
	// EnvModelURL is the proxy's root URL, EnvModelKey the placeholder key it takes in place of
	// the credential: a session's, and the proxy's own EnvModelKey.
	EnvModelURL = "AUTONOMY_MODEL_URL"
	EnvModelKey = "AUTONOMY_MODEL_KEY"
)

// ModelPlaceholder is the placeholder key of the fleet in namespace ns. It is no secret (any
// reader of a PodTemplate sees it): it only makes a request that does not come from a session
// of the fleet's agent CLIs fail early. What admits a pod to the proxy is the NetworkPolicy
// ModelProxyPolicyName, which admits the fleet's session pods only.
func ModelPlaceholder(ns string) string {
	sum := sha256.Sum256([]byte("autonomy.dev/model-proxy/" + ns))
	return "autonomy-proxy-" + hex.EncodeToString(sum[:18])
}

// ModelProxyURL is the proxy's root URL inside the cluster: its Service in namespace ns.
func ModelProxyURL(ns string) string {
	return fmt.Sprintf("http://%s.%s.svc:%d", ModelProxyName, ns, ModelProxyPort)
}

// skills reports whether an agent of the profile runs a skill (and so needs the model proxy).
func (c *compiler) skills() bool {
	for _, a := range c.p.Actors {
		if a.Skill && !a.IsHuman() {
			return true
		}
	}
	return false
}

// modelEnv is the model proxy's URL and placeholder in a skill's session container; nothing for
// a script's.
func (c *compiler) modelEnv(a *ir.Actor) []corev1.EnvVar {
	if !a.Skill {
		return nil
	}
	return []corev1.EnvVar{{Name: EnvModelURL, Value: ModelProxyURL(c.box.Namespace)}, {Name: EnvModelKey, Value: ModelPlaceholder(c.box.Namespace)}}
}

// modelAPI is the API of the box's preset.
func (c *compiler) modelAPI() modelproxy.API {
	if c.box.Agent.Anthropic() {
		return modelproxy.Anthropic
	}
	return modelproxy.OpenAI
}

// modelProxyObjects are the proxy's ServiceAccount (no token, no Role), Deployment and Service.
func (c *compiler) modelProxyObjects() []any {
	ns := c.box.Namespace
	labels := FleetLabels(ns)
	labels[LabelComponent] = ComponentModelProxy
	no, yes, user := false, true, int64(65532)
	port := intstr.FromInt32(ModelProxyPort)
	env := []corev1.EnvVar{
		{Name: EnvModelAPI, Value: string(c.modelAPI())},
		{Name: EnvModelKey, Value: ModelPlaceholder(ns)},
		{Name: EnvModelCredential, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: c.box.ModelProxy.Secret}, Key: c.box.Agent.CredentialEnv}}},
		{Name: EnvModelListen, Value: ":" + strconv.Itoa(ModelProxyPort)},
	}
	if u := c.box.ModelProxy.Upstream; u != "" {
		env = append(env, corev1.EnvVar{Name: EnvModelUpstream, Value: u})
	}
	ctr := corev1.Container{Name: "model-proxy", Image: c.box.Image, Args: ModelProxyArgs, Env: env,
		Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: ModelProxyPort, Protocol: corev1.ProtocolTCP}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: port}}},
		// Requests and limits (modelProxy.resources, by default defaultProxyRequests and
		// defaultProxyLimits): the proxy that holds the model key neither starves the node
		// nor is evicted first as a pod without requests would be.
		Resources:       corev1.ResourceRequirements{Requests: resourceList(c.box.ModelProxy.Requests), Limits: resourceList(c.box.ModelProxy.Limits)},
		SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
	}
	replicas := int32(ModelProxyReplicas)
	sa := &corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"), ObjectMeta: c.meta(ModelProxyName, labels), AutomountServiceAccountToken: &no}
	dep := &appsv1.Deployment{TypeMeta: typeMeta("apps/v1", "Deployment"), ObjectMeta: c.meta(ModelProxyName, labels),
		// Recreate: a rollout ends the old pod before it starts the new one, so the proxy never
		// has more than ModelProxyReplicas pods, which is what the quota leaves it (quota.go).
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				ServiceAccountName: ModelProxyName, AutomountServiceAccountToken: &no, EnableServiceLinks: &no, NodeSelector: c.box.NodeSelector,
				SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: &user, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
				Containers:      []corev1.Container{ctr}}}}}
	svc := &corev1.Service{TypeMeta: typeMeta("v1", "Service"), ObjectMeta: c.meta(ModelProxyName, labels),
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "http", Port: ModelProxyPort, TargetPort: port, Protocol: corev1.ProtocolTCP}}}}
	return []any{sa, dep, svc}
}

// privateNets are what the proxy's default egress excludes: private, shared, loopback and
// link-local networks (the cluster's own, and a cloud's metadata endpoint).
var privateNets = map[string][]string{
	"0.0.0.0/0": {"10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16"},
	"::/0":      {"::1/128", "fc00::/7", "fe80::/10"},
}

// modelProxyEgress is the proxy's egress: the cluster DNS, and the model endpoint's networks
// (modelProxy.egress), else every public address on port 443.
func (c *compiler) modelProxyEgress() []networkingv1.NetworkPolicyEgressRule {
	tcp := corev1.ProtocolTCP
	rules := []networkingv1.NetworkPolicyEgressRule{dnsEgress()}
	if c.box.ModelProxy.Egress == nil {
		https := intstr.FromInt32(443)
		for _, cidr := range []string{"0.0.0.0/0", "::/0"} {
			rules = append(rules, networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: privateNets[cidr]}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &https}}})
		}
		return rules
	}
	return append(rules, egressRules(c.box.ModelProxy.Egress)...)
}
