package kubernetes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/cron"
	"github.com/autonomyhq/autonomy/substrates"
)

// Kustomization is the kustomization file compile writes, the one `kubectl apply -k` reads.
const Kustomization = Dir + "/kustomization.yaml"

// kustomization is what compile writes of a kustomization: the namespace every namespaced
// object lands in, and the resource files in the order they are applied.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace"`
	Resources  []string `json:"resources"`
}

// manifests writes the kustomization and its resource files: the namespace, the fleet (its
// configs, the NetworkPolicy, the admission policy), and one file per agent.
func (c *compiler) manifests(fleet FleetConfig) ([]substrates.File, error) {
	ns := c.box.Namespace
	var files []substrates.File
	k := kustomization{APIVersion: "kustomize.config.k8s.io/v1beta1", Kind: "Kustomization", Namespace: ns}
	emit := func(name string, objs ...any) error {
		data, err := documents(objs...)
		if err != nil {
			return err
		}
		files = append(files, substrates.File{Path: Dir + "/" + name, Data: data, Mode: 0o644, Header: substrates.HashHeader})
		k.Resources = append(k.Resources, name)
		return nil
	}
	install, err := c.installConfigMap()
	if err != nil {
		return nil, err
	}
	fc, _ := json.MarshalIndent(fleet, "", "  ")
	fleetCM := &corev1.ConfigMap{TypeMeta: typeMeta("v1", "ConfigMap"), ObjectMeta: c.meta(ConfigMapFleet, FleetLabels(ns)),
		Data: map[string]string{FleetConfigKey: string(fc) + "\n"}}
	nsObj := &corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"), ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: FleetLabels(ns)}}
	// Pod Security Admission refuses, in the namespace, any pod that is not restricted (root,
	// added capabilities, privilege escalation, an unconfined seccomp profile, host ports or
	// namespaces), whoever creates it; every PodTemplate complies.
	nsObj.Labels[PodSecurityEnforce] = "restricted"
	vap, binding := c.admission()
	if err := emit("namespace.yaml", nsObj); err != nil {
		return nil, err
	}
	fleetObjs := []any{fleetCM, install, c.networkPolicy(), c.defaultDeny(), c.modelProxyPolicy(), vap, binding}
	cmVAP, cmBinding := c.configMapAdmission()
	fleetObjs = append(fleetObjs, cmVAP, cmBinding)
	fleetObjs = append(fleetObjs, c.quota())
	if c.p.Policy.MaxConcurrent.Value > 0 {
		// The slots of maxConcurrent (runner_slots.go), installed empty so that a launcher
		// needs only get and update on it, by name. An apply (client-side or server-side)
		// leaves its data, which the manifest does not set, as the launchers wrote it.
		fleetObjs = append(fleetObjs, &corev1.ConfigMap{TypeMeta: typeMeta("v1", "ConfigMap"), ObjectMeta: c.meta(SlotsConfigMap, FleetLabels(ns))})
	}
	if err := emit("fleet.yaml", fleetObjs...); err != nil {
		return nil, err
	}
	if c.skills() {
		if err := emit("model-proxy.yaml", c.modelProxyObjects()...); err != nil {
			return nil, err
		}
	}
	for _, a := range c.p.Actors {
		if a.IsHuman() {
			continue
		}
		if err := emit("actors/"+ObjectName(a.Name.Value)+".yaml", c.actorObjects(a)...); err != nil {
			return nil, err
		}
	}
	// The compile's hash, on its Namespace: kubernetes prune deletes nothing unless the cluster
	// holds this very compile (AnnotationCompile).
	var objs []*unstructured.Unstructured
	for _, f := range files {
		docs, err := Documents(f.Data)
		if err != nil {
			return nil, err
		}
		objs = append(objs, docs...)
	}
	nsObj.Annotations = map[string]string{AnnotationCompile: compileHash(objs)}
	if files[0].Data, err = documents(nsObj); err != nil {
		return nil, err
	}
	data, err := documents(k)
	if err != nil {
		return nil, err
	}
	return append(files, substrates.File{Path: Kustomization, Data: data, Mode: 0o644, Header: substrates.HashHeader}), nil
}

// compileHash is the hash of a compile's objects, in their order ("sha256:" and 64 hex digits):
// each object's JSON (its keys sorted), its Namespace's AnnotationCompile left out, so that the
// hash compile writes there is the hash of what it wrote.
func compileHash(objs []*unstructured.Unstructured) string {
	h := sha256.New()
	for _, o := range objs {
		if o.GetKind() == "Namespace" && o.GroupVersionKind().Group == "" {
			o = o.DeepCopy()
			a := o.GetAnnotations()
			delete(a, AnnotationCompile)
			if len(a) == 0 {
				unstructured.RemoveNestedField(o.Object, "metadata", "annotations")
			} else {
				o.SetAnnotations(a)
			}
		}
		js, _ := json.Marshal(o.Object)
		h.Write(js)
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

// meta is the metadata of a namespaced object of the fleet.
func (c *compiler) meta(name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: c.box.Namespace, Labels: labels}
}

// installConfigMap holds every installed file under InstallKey(path).
func (c *compiler) installConfigMap() (*corev1.ConfigMap, error) {
	if n := c.installBytes(); n > maxInstallBytes {
		return nil, ir.Diagnostics{{File: c.p.File, Pos: ir.Pos{Line: 1, Col: 1}, Severity: ir.Error,
			Message: fmt.Sprintf("the installation (behaviors, resources, result schemas, policy) is %d bytes; the Kubernetes target installs it as one ConfigMap, which holds at most %d", n, maxInstallBytes),
			Hint:    "shrink or drop the largest resources, or bake them into the image"}}
	}
	cm := &corev1.ConfigMap{TypeMeta: typeMeta("v1", "ConfigMap"), ObjectMeta: c.meta(ConfigMapInstall, FleetLabels(c.box.Namespace))}
	for _, p := range c.installPaths() {
		f := c.install[p]
		if utf8.Valid(f.Data) {
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data[InstallKey(p)] = string(f.Data)
		} else {
			if cm.BinaryData == nil {
				cm.BinaryData = map[string][]byte{}
			}
			cm.BinaryData[InstallKey(p)] = f.Data
		}
	}
	return cm, nil
}

// installVolume mounts, read-only, what of ConfigMapInstall a session of a needs at its paths:
// its own behavior, every agent's result schema, and what every actor shares (the policy, the
// resources, the overlays), never another actor's behavior; and the fleet config at FleetConfigKey. A script
// behavior keeps its executable bit. Each PodTemplate lists only its own and the shared files,
// so the output grows linearly with the actors.
func (c *compiler) installVolume(a *ir.Actor) corev1.Volume {
	src, _ := a.BehaviorSource()
	paths := append(slices.Clone(c.shared), c.bySource[src]...)
	// Every agent's result contract: the runner in a session's pod (a skill's tools, a script
	// calling the runner) checks the results of the sessions it reads with them, and its
	// ServiceAccount may not read ConfigMapInstall.
	for _, x := range c.p.Actors {
		if !x.IsHuman() && x.Contract() != nil {
			paths = append(paths, c.resultPath(x))
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	items := make([]corev1.KeyToPath, 0, len(paths))
	for _, p := range paths {
		it := corev1.KeyToPath{Key: InstallKey(p), Path: p}
		if c.install[p].Mode&0o111 != 0 {
			mode := int32(0o555)
			it.Mode = &mode
		}
		items = append(items, it)
	}
	mode := int32(0o444)
	return corev1.Volume{Name: InstallVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: []corev1.VolumeProjection{
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapInstall}, Items: items}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapFleet}, Items: []corev1.KeyToPath{{Key: FleetConfigKey, Path: FleetConfigKey}}}},
		}}}}
}

// actorObjects are an agent's ServiceAccount, Role and RoleBinding (when it holds a capability
// the cluster grants), PodTemplate, and one CronJob per cron trigger.
func (c *compiler) actorObjects(a *ir.Actor) []any {
	name, ns := ObjectName(a.Name.Value), c.box.Namespace
	labels := ActorLabels(ns, a.Name.Value)
	token := holdsCluster(a)
	sa := &corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"), ObjectMeta: c.meta(name, labels), AutomountServiceAccountToken: &token}
	sa.Annotations = map[string]string{AnnotationActor: a.Name.Value}
	// Its launches' admission first: installed before the Roles that let them be made.
	vap, binding := c.launchAdmission(a)
	objs := []any{vap, binding, sa}
	if token {
		role := &rbacv1.Role{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "Role"), ObjectMeta: c.meta(name, labels), Rules: rules(a, c.agents, c.humans(), c.p.Policy.MaxConcurrent.Value > 0)}
		rb := &rbacv1.RoleBinding{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"), ObjectMeta: c.meta(name, labels),
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}}
		objs = append(objs, role, rb)
	}
	pt := c.podTemplate(a)
	objs = append(objs, pt)
	for i, t := range a.Triggers {
		if t.Kind != ir.Cron {
			continue
		}
		params := map[string]string{}
		for _, pm := range t.Params {
			params[pm.Name.Value] = cronSource(pm.Source.Value)
		}
		tz := c.box.TimeZone
		cj := &batchv1.CronJob{TypeMeta: typeMeta("batch/v1", "CronJob"), ObjectMeta: c.meta(cronJobName(a.Name.Value, i), labels),
			Spec: batchv1.CronJobSpec{Schedule: cron.PortableOf(t.Cron.Value), TimeZone: &tz, ConcurrencyPolicy: batchv1.ForbidConcurrent,
				JobTemplate: WithParams(JobTemplate(pt), "", params)}}
		cj.Annotations = map[string]string{AnnotationActor: a.Name.Value}
		objs = append(objs, cj)
	}
	return objs
}

// cronSource is a param's value in a session a cron trigger fires: trigger.kind is "cron"; a
// cron trigger has no subject, so every other source is empty.
func cronSource(source string) string {
	if source == "trigger.kind" {
		return "cron"
	}
	return ""
}

// podTemplate is the pod every session of agent a runs (see JobTemplate): the image running
// SessionArgs as a non-root user with no privilege, the installation mounted read-only, a
// ServiceAccount token only when its capabilities reach the API, no service links.
func (c *compiler) podTemplate(a *ir.Actor) *corev1.PodTemplate {
	name, ns := ObjectName(a.Name.Value), c.box.Namespace
	labels := ActorLabels(ns, a.Name.Value)
	env := append(SessionEnv(a.Name.Value),
		corev1.EnvVar{Name: "AUTONOMY_CAPABILITIES", Value: capabilitiesEnv(a)},
		corev1.EnvVar{Name: "AUTONOMY_BEHAVIOR", Value: InstallDir + "/" + dataDir + "/" + a.BehaviorFile})
	if a.Contract() != nil {
		env = append(env, corev1.EnvVar{Name: "AUTONOMY_RESULT_SCHEMA", Value: InstallDir + "/" + c.resultPath(a)})
	}
	env = append(env, c.modelEnv(a)...)
	no, yes, user := false, true, int64(65532)
	ctr := corev1.Container{Name: ContainerName, Image: c.box.Image, Args: SessionArgs, Env: env,
		TerminationMessagePath: TerminationLog, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		VolumeMounts:    []corev1.VolumeMount{{Name: InstallVolume, MountPath: InstallDir, ReadOnly: true}},
		SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
	}
	// Requests and limits, by default defaultRequests and defaultLimits: no session takes the
	// node's every CPU or its memory.
	ctr.Resources = corev1.ResourceRequirements{Requests: resourceList(c.box.Requests), Limits: resourceList(c.box.Limits)}
	token := holdsCluster(a)
	pt := &corev1.PodTemplate{TypeMeta: typeMeta("v1", "PodTemplate"), ObjectMeta: c.meta(name, labels),
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			ServiceAccountName: name, AutomountServiceAccountToken: &token, EnableServiceLinks: &no,
			RestartPolicy: corev1.RestartPolicyNever, NodeSelector: c.box.NodeSelector,
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: &user, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers:      []corev1.Container{ctr}, Volumes: []corev1.Volume{c.installVolume(a)}}}}
	pt.Annotations = map[string]string{AnnotationActor: a.Name.Value}
	if a.Timeout.Value > 0 {
		pt.Annotations[AnnotationTimeout] = strconv.Itoa(a.Timeout.Value * 60)
	}
	if c.box.KeepFinished > 0 {
		pt.Annotations[AnnotationKeepFinished] = strconv.Itoa(int(c.box.KeepFinished / time.Second))
	}
	return pt
}

// resultPath is where resultSchema installed the actor's result contract.
func (c *compiler) resultPath(a *ir.Actor) string {
	if name := a.Contract().Named.Value; name != "" {
		return dataDir + "/results/" + name + ".json"
	}
	return dataDir + "/results/" + a.Name.Value + ".json"
}

func resourceList(m map[string]resource.Quantity) corev1.ResourceList {
	if len(m) == 0 {
		return nil
	}
	out := corev1.ResourceList{}
	for k, v := range m {
		out[corev1.ResourceName(k)] = v
	}
	return out
}

// networkPolicy admits no ingress to a session pod, and egress only to the model proxy's pods,
// the cluster DNS, and policy.box.kubernetes.egress.allow.
func (c *compiler) networkPolicy() *networkingv1.NetworkPolicy {
	ns := c.box.Namespace
	tcp := corev1.ProtocolTCP
	proxyPort := intstr.FromInt32(ModelProxyPort)
	egress := []networkingv1.NetworkPolicyEgressRule{
		{To: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelFleet: ns, LabelComponent: ComponentModelProxy}}}},
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &proxyPort}}},
		dnsEgress(),
	}
	egress = append(egress, egressRules(c.box.Egress)...)
	return &networkingv1.NetworkPolicy{TypeMeta: typeMeta("networking.k8s.io/v1", "NetworkPolicy"), ObjectMeta: c.meta(NetworkPolicyName, FleetLabels(ns)),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{LabelFleet: ns, LabelComponent: ComponentSession}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Egress:      egress}}
}

// dnsEgress admits the cluster DNS (kube-dns in kube-system, port 53).
func dnsEgress() networkingv1.NetworkPolicyEgressRule {
	tcp, udp, dns := corev1.ProtocolTCP, corev1.ProtocolUDP, intstr.FromInt32(53)
	return networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
		PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}}}},
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: &dns}, {Protocol: &tcp, Port: &dns}}}
}

// egressRules admits each rule's network, on its TCP port or every port.
func egressRules(rules []EgressRule) []networkingv1.NetworkPolicyEgressRule {
	tcp := corev1.ProtocolTCP
	var out []networkingv1.NetworkPolicyEgressRule
	for _, r := range rules {
		rule := networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: r.CIDR}}}}
		if r.Port > 0 {
			port := intstr.FromInt(r.Port)
			rule.Ports = []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}}
		}
		out = append(out, rule)
	}
	return out
}

// defaultDeny selects every pod of the namespace and admits no traffic: a pod no other policy
// selects (one whose labels a launch changed, were the admission policy to let it) reaches
// nothing and is reached by nothing.
func (c *compiler) defaultDeny() *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{TypeMeta: typeMeta("networking.k8s.io/v1", "NetworkPolicy"), ObjectMeta: c.meta(DefaultDenyPolicyName, FleetLabels(c.box.Namespace)),
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}}}
}

// modelProxyPolicy is what the default deny leaves the model proxy's pods: ingress from the
// fleet's session pods on ModelProxyPort, and egress to the cluster DNS and the model endpoint
// only (modelProxyEgress).
func (c *compiler) modelProxyPolicy() *networkingv1.NetworkPolicy {
	ns := c.box.Namespace
	tcp, port := corev1.ProtocolTCP, intstr.FromInt32(ModelProxyPort)
	return &networkingv1.NetworkPolicy{TypeMeta: typeMeta("networking.k8s.io/v1", "NetworkPolicy"), ObjectMeta: c.meta(ModelProxyPolicyName, FleetLabels(ns)),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{LabelFleet: ns, LabelComponent: ComponentModelProxy}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelFleet: ns, LabelComponent: ComponentSession}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}}}},
			Egress: c.modelProxyEgress()}}
}
