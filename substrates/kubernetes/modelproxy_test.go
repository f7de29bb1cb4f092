package kubernetes

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// TestModelProxyManifests: a fleet with a skill gets the model proxy (its Deployment reading the
// box's Secret under the preset's credential name, the box's upstream, no ServiceAccount token),
// a Service the skill's PodTemplate names, and a proxy NetworkPolicy whose egress is the DNS and
// modelProxy.egress only; a script's PodTemplate names no proxy, and a fleet of scripts gets none.
func TestModelProxyManifests(t *testing.T) {
	objs := compiledObjects(t, writeFleet(t, fleetProfile))
	var dep appsv1.Deployment
	var svc corev1.Service
	var np networkingv1.NetworkPolicy
	var writer, worker corev1.PodTemplate
	for _, o := range []struct {
		kind, name string
		into       any
	}{{"Deployment", ModelProxyName, &dep}, {"Service", ModelProxyName, &svc}, {"NetworkPolicy", ModelProxyPolicyName, &np},
		{"PodTemplate", ObjectName("writer"), &writer}, {"PodTemplate", ObjectName("worker_1"), &worker}} {
		if err := object(objs, o.kind, o.name, o.into); err != nil {
			t.Fatal(err)
		}
	}
	pod := dep.Spec.Template.Spec
	if dep.Spec.Template.Labels[LabelComponent] != ComponentModelProxy || pod.ServiceAccountName != ModelProxyName || *pod.AutomountServiceAccountToken ||
		!slices.Equal(pod.Containers[0].Args, ModelProxyArgs) || pod.Containers[0].Image != "registry.example/autonomy-agent:v1" {
		t.Errorf("the proxy's pod: %+v", pod)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range pod.Containers[0].Env {
		env[e.Name] = e
	}
	if ref := env[EnvModelCredential].ValueFrom; ref == nil || ref.SecretKeyRef.Name != "model-key" || ref.SecretKeyRef.Key != "ANTHROPIC_API_KEY" {
		t.Errorf("the credential is not read from the box's Secret under ANTHROPIC_API_KEY: %+v", env[EnvModelCredential])
	}
	if env[EnvModelAPI].Value != "anthropic" || env[EnvModelUpstream].Value != "https://llm.example.com/v1" || env[EnvModelKey].Value != ModelPlaceholder("fleet-a") {
		t.Errorf("the proxy's env: %+v", env)
	}
	// The skill's session reaches the Service by the URL its PodTemplate names.
	u, err := url.Parse(envOf(writer, EnvModelURL))
	if err != nil || u.Hostname() != svc.Name+".fleet-a.svc" || u.Port() != strconv.Itoa(int(svc.Spec.Ports[0].Port)) || svc.Spec.Ports[0].TargetPort.IntValue() != ModelProxyPort ||
		svc.Spec.Selector[LabelComponent] != ComponentModelProxy {
		t.Errorf("the session's %s %q does not reach the Service %+v", EnvModelURL, envOf(writer, EnvModelURL), svc.Spec)
	}
	if envOf(writer, EnvModelKey) != ModelPlaceholder("fleet-a") || envOf(worker, EnvModelURL) != "" || envOf(worker, EnvModelKey) != "" {
		t.Errorf("the placeholder: the skill's %q, the script's %q", envOf(writer, EnvModelKey), envOf(worker, EnvModelKey))
	}
	// The proxy's egress: the cluster DNS and modelProxy.egress, nothing else.
	var nets []string
	for _, r := range np.Spec.Egress {
		for _, to := range r.To {
			if to.IPBlock != nil {
				nets = append(nets, to.IPBlock.CIDR+":"+r.Ports[0].Port.String())
			} else if to.PodSelector.MatchLabels["k8s-app"] != "kube-dns" {
				t.Errorf("the proxy may reach %+v", to)
			}
		}
	}
	if !slices.Equal(nets, []string{"203.0.113.0/24:443"}) {
		t.Errorf("the proxy's egress is %v, want the model endpoint's network only", nets)
	}

	// A fleet of scripts has no model proxy.
	objs = compiledObjects(t, writeFleet(t, strings.Replace(fleetProfile, "behavior: skills/writer", "behavior: scripts/run.sh", 1)))
	if object(objs, "Deployment", ModelProxyName, &dep) == nil {
		t.Errorf("a fleet of scripts got a model proxy")
	}
}

// TestModelProxyHasRequestsAndLimits: the model proxy's container has CPU, memory and
// ephemeral-storage requests and limits by default (it holds the model key: neither a node hog
// nor the first pod evicted), and modelProxy.resources replaces each it sets, as resources
// does for a session.
func TestModelProxyHasRequestsAndLimits(t *testing.T) {
	for _, tc := range []struct{ box, requests, limits string }{
		{"", "cpu=100m ephemeral-storage=64Mi memory=128Mi", "cpu=1 ephemeral-storage=1Gi memory=512Mi"},
		{"modelProxy: { resources: { requests: { cpu: 500m }, limits: { memory: 2Gi } } }", "cpu=500m ephemeral-storage=64Mi memory=128Mi", "cpu=1 ephemeral-storage=1Gi memory=2Gi"},
		{"modelProxy: { resources: { requests: { memory: 1Gi } } }", "cpu=100m ephemeral-storage=64Mi memory=1Gi", "cpu=1 ephemeral-storage=1Gi memory=1Gi"},
	} {
		profile := "schema: autonomy.ir.v1\ntargets: [kubernetes]\nactors:\n  writer:\n    behavior: skills/writer\n    triggers: [{ dispatch: true }]\npolicy:\n  box:\n    kubernetes: { image: registry.example/autonomy-agent:v1, " + tc.box + " }\n"
		var dep appsv1.Deployment
		if err := object(compiledObjects(t, writeFleet(t, profile)), "Deployment", ModelProxyName, &dep); err != nil {
			t.Fatal(err)
		}
		list := func(l corev1.ResourceList) string {
			var out []string
			for k, v := range l {
				out = append(out, string(k)+"="+v.String())
			}
			slices.Sort(out)
			return strings.Join(out, " ")
		}
		res := dep.Spec.Template.Spec.Containers[0].Resources
		if got := list(res.Requests); got != tc.requests {
			t.Errorf("%q: requests %s, want %s", tc.box, got, tc.requests)
		}
		if got := list(res.Limits); got != tc.limits {
			t.Errorf("%q: limits %s, want %s", tc.box, got, tc.limits)
		}
	}
}
