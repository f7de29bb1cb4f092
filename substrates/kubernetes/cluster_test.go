package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/autonomyhq/autonomy/internal/k8stest"
)

// nsSeq numbers the namespaces of the tests, which share one cluster across -count runs.
var nsSeq atomic.Int64

// namespace is a namespace no other test of this binary uses.
func namespace(base string) string { return fmt.Sprintf("%s-%d", base, nsSeq.Add(1)) }

// install compiles fleetProfile into namespace ns and applies every object its kustomization
// lists with server-side apply and strict field validation, returning each object's version
// (its generation, else its resourceVersion) by kind/name.
func install(t *testing.T, cfg *rest.Config, ns string) map[string]string {
	t.Helper()
	return installFleet(t, cfg, ns, fleetProfile)
}

// installFleet is install of profile, a variant of fleetProfile.
func installFleet(t *testing.T, cfg *rest.Config, ns, profile string) map[string]string {
	t.Helper()
	objs := compiledObjects(t, writeFleet(t, strings.Replace(profile, "namespace: fleet-a", "namespace: "+ns, 1)))
	return apply(t, cfg, objs)
}

func apply(t *testing.T, cfg *rest.Config, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	dc := kubernetes.NewForConfigOrDie(cfg).Discovery()
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn := dynamic.NewForConfigOrDie(cfg)
	ctx := context.Background()
	versions := map[string]string{}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s %s: %v", gvk, o.GetName(), err)
		}
		// As kubectl does: the object's scope, not its metadata, says where it goes.
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		data, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		force := true
		got, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "autonomy", Force: &force, FieldValidation: "Strict"})
		if err != nil {
			t.Fatalf("apply %s %s: %v", gvk.Kind, o.GetName(), err)
		}
		// A spec change bumps the generation; an object without one (a ConfigMap, a Role) changes
		// its resourceVersion. A controller writing status (the admission policy's type
		// checking) changes neither generation nor what autonomy applied.
		// A ResourceQuota has no generation, and its controller writes its status (the usage):
		// what autonomy applied is its spec.
		spec, hasStatus := got.Object["spec"], got.Object["status"] != nil
		if g := got.GetGeneration(); g > 0 {
			versions[gvk.Kind+"/"+o.GetName()] = fmt.Sprintf("generation %d", g)
		} else if hasStatus && spec != nil {
			versions[gvk.Kind+"/"+o.GetName()] = fmt.Sprintf("spec %v", spec)
		} else {
			versions[gvk.Kind+"/"+o.GetName()] = "resourceVersion " + got.GetResourceVersion()
		}
	}
	return versions
}

// TestManifestsApplyStrictlyAndIdempotently: every generated object is accepted by a real API
// server under server-side apply with strict field validation (an unknown or duplicated field
// fails), and applying them again changes none of them.
func TestManifestsApplyStrictlyAndIdempotently(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("apply-twice")
	first := install(t, c.Config, ns)
	second := install(t, c.Config, ns)
	if len(first) < 15 {
		t.Errorf("only %d objects applied", len(first))
	}
	for k, v := range first {
		if second[k] != v {
			t.Errorf("%s changed on the second apply: %s, then %s", k, v, second[k])
		}
	}
}

// TestManifestsApplyAsKustomizeRendersThem: kustomize's namespace transformer (the kustomization's
// namespace:) also writes the namespace into objects it does not know to be cluster-scoped, the
// admission policy and its binding among them (kustomize build does); the API server still
// installs them cluster-wide, as kubectl apply -k sends them.
func TestManifestsApplyAsKustomizeRendersThem(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("kustomized")
	objs := compiledObjects(t, writeFleet(t, strings.Replace(fleetProfile, "namespace: fleet-a", "namespace: "+ns, 1)))
	for _, o := range objs {
		if o.GetKind() != "Namespace" {
			o.SetNamespace(ns)
		}
	}
	apply(t, c.Config, objs)
	dyn := dynamic.NewForConfigOrDie(c.Config)
	vap := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	got, err := dyn.Resource(vap).Get(context.Background(), AdmissionPolicyName(ns), metav1.GetOptions{})
	if err != nil || got.GetNamespace() != "" {
		t.Fatalf("the admission policy: %v, namespace %q", err, got.GetNamespace())
	}
}

// access is one request a ServiceAccount might make.
type access struct {
	verb, group, resource, sub, name string
}

func (a access) String() string {
	s := a.verb + " " + a.group + "/" + a.resource
	if a.sub != "" {
		s += "/" + a.sub
	}
	if a.name != "" {
		s += " " + a.name
	}
	return s
}

// probes are the requests asked of every ServiceAccount: everything a capability grants, and
// what none does.
var probes = []access{
	{verb: "create", group: "batch", resource: "jobs"},
	{verb: "get", group: "batch", resource: "jobs"},
	{verb: "list", group: "batch", resource: "jobs"},
	{verb: "watch", group: "batch", resource: "jobs"},
	{verb: "delete", group: "batch", resource: "jobs"},
	{verb: "patch", group: "batch", resource: "jobs"},
	{verb: "update", group: "batch", resource: "jobs"},
	{verb: "create", group: "batch", resource: "cronjobs"},
	{verb: "get", resource: "pods"},
	{verb: "list", resource: "pods"},
	{verb: "get", resource: "pods", sub: "log"},
	{verb: "create", resource: "pods"},
	{verb: "delete", resource: "pods"},
	{verb: "create", resource: "pods", sub: "exec"},
	{verb: "get", resource: "podtemplates", name: "worker-1-ba7bf687"},
	{verb: "get", resource: "podtemplates", name: "triage"},
	{verb: "list", resource: "podtemplates"},
	{verb: "get", resource: "configmaps", name: ConfigMapFleet},
	{verb: "get", resource: "configmaps", name: ConfigMapInstall},
	{verb: "get", resource: "configmaps", name: SlotsConfigMap},
	{verb: "update", resource: "configmaps", name: SlotsConfigMap},
	{verb: "update", resource: "configmaps", name: ConfigMapFleet},
	{verb: "create", resource: "configmaps"},
	{verb: "list", resource: "configmaps"},
	{verb: "update", resource: "configmaps", name: "a-0123456789abcdef"},
	{verb: "patch", resource: "configmaps", name: "a-0123456789abcdef"},
	{verb: "patch", resource: "configmaps", name: SlotsConfigMap},
	{verb: "get", resource: "configmaps", name: "a-0123456789abcdef"},
	{verb: "delete", resource: "configmaps", name: "a-0123456789abcdef"},
	{verb: "create", resource: "resourcequotas"},
	{verb: "update", resource: "resourcequotas", name: QuotaName},
	{verb: "delete", resource: "configmaps", name: SlotsConfigMap},
	{verb: "get", resource: "secrets"},
	{verb: "list", resource: "secrets"},
	{verb: "create", resource: "serviceaccounts", sub: "token"},
	{verb: "create", group: "rbac.authorization.k8s.io", resource: "rolebindings"},
	{verb: "escalate", group: "rbac.authorization.k8s.io", resource: "roles"},
	{verb: "impersonate", resource: "serviceaccounts"},
}

// TestRBACIsLeastPrivilege: the real authorizer, through a SubjectAccessReview per actor's
// ServiceAccount, allows exactly what the actor's capabilities grant (the table below, written
// from the standard, not from the permission table) and denies every other probe.
func TestRBACIsLeastPrivilege(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("rbac")
	install(t, c.Config, ns)
	// The fleet has a maxConcurrent: a launcher also claims its slot (get and update of the
	// slots ConfigMap, by name) and counts the Jobs in flight (list).
	launchWorker := []string{"create batch/jobs", "get /configmaps " + ConfigMapFleet, "get /podtemplates worker-1-ba7bf687",
		"get /configmaps " + SlotsConfigMap, "update /configmaps " + SlotsConfigMap, "list batch/jobs"}
	allowed := map[string][]string{
		// agent:launch@worker_1, agent:list (which reaches the person owner: it reads the
		// ConfigMaps, where the asks are; RBAC cannot tell them from the others)
		"triage": append(launchWorker, "get batch/jobs", "watch batch/jobs", "get /pods", "list /pods", "get /pods/log",
			"get /configmaps "+ConfigMapInstall, "get /configmaps a-0123456789abcdef", "list /configmaps"),
		// no capability
		"worker-1-ba7bf687": nil,
		// agent:launch, agent:cancel, agent:update
		// agent:launch reaches the person owner: boss parks asks from its sessions (create
		// configmaps, which the ConfigMap admission policy narrows to its own asks); never
		// reads, edits or resolves one
		"boss": append(launchWorker, "get /podtemplates triage", "patch batch/jobs", "create /configmaps"),
		// code:review: nothing in the cluster
		"reviewer": nil,
		// agent:cancel@worker_1, agent:update@worker_1 (the admission policy narrows them: a
		// cancel is a patch that ends the Job and keeps it, as runner cancel makes it)
		"janitor": {"patch batch/jobs"},
		// agent:cancel@worker_1
		"stopper": {"patch batch/jobs"},
		// a skill without capabilities: nothing in the cluster
		"writer": nil,
		// the model proxy: no Role; the kubelet, not the proxy, reads its Secret
		ModelProxyName: nil,
	}
	cs := kubernetes.NewForConfigOrDie(c.Config)
	for sa, want := range allowed {
		for _, p := range probes {
			sar := &authv1.SubjectAccessReview{Spec: authv1.SubjectAccessReviewSpec{
				User:   "system:serviceaccount:" + ns + ":" + sa,
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
				ResourceAttributes: &authv1.ResourceAttributes{Namespace: ns, Verb: p.verb, Group: p.group, Resource: p.resource,
					Subresource: p.sub, Name: p.name}}}
			got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			expect := false
			for _, w := range want {
				expect = expect || w == p.String()
			}
			if got.Status.Allowed != expect {
				t.Errorf("%s: %s allowed=%v, want %v (%s)", sa, p, got.Status.Allowed, expect, got.Status.Reason)
			}
		}
	}
}

// as is a clientset acting as the ServiceAccount sa of ns (impersonated by the admin).
func as(cfg *rest.Config, ns, sa string) *kubernetes.Clientset {
	return kubernetes.NewForConfigOrDie(asConfig(cfg, ns, sa))
}

// asConfig is cfg acting as the ServiceAccount sa of ns (impersonated by the admin).
func asConfig(cfg *rest.Config, ns, sa string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + sa,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	return c
}

// sessionJob is a session Job of actor built the way the runner builds it for a launch from a
// session of triage (sessionJobBy).
func sessionJob(t *testing.T, cs *kubernetes.Clientset, ns, actor, id string) *batchv1.Job {
	t.Helper()
	return sessionJobBy(t, cs, ns, "triage", actor, id)
}

// sessionJobBy is a session Job of actor built the way the runner builds it for a launch from a
// session of by: from the actor's PodTemplate as the cluster holds it, with worker_1's params
// bound to subject.actor and subject.actorRole (WHO, ROLE) set to by and NONE, as the admission
// policy requires of a session's launch.
func sessionJobBy(t *testing.T, cs *kubernetes.Clientset, ns, by, actor, id string) *batchv1.Job {
	t.Helper()
	pt, err := cs.CoreV1().PodTemplates(ns).Get(context.Background(), ObjectName(actor), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The params the actor declares (the launch policy refuses any other), from the installed
	// fleet config.
	fc, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), ConfigMapFleet, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var fleet runnerFleet
	if err := json.Unmarshal([]byte(fc.Data[FleetConfigKey]), &fleet); err != nil {
		t.Fatal(err)
	}
	params := map[string]string{}
	for _, a := range fleet.Actors {
		if a.Actor != actor {
			continue
		}
		for _, k := range declaredParams(a.Triggers) {
			if v, ok := map[string]string{"TOPIC": "x", "WHO": by, "ROLE": "NONE"}[k]; ok {
				params[k] = v
			}
		}
	}
	return SessionJob(ns, JobTemplate(pt), Session{ID: id, Ref: "#1", Params: params})
}

// TestLaunchScopeIsAdmitted: a launch is a real create attempt (dry run) as the launcher's
// ServiceAccount: the fleet's admission policy admits a Job of an actor the scope names built
// from its template, and refuses one outside the scope, one whose pod was changed (another
// ServiceAccount, another image, a secret read as env), and RBAC refuses an actor without
// agent:launch.
func TestLaunchScopeIsAdmitted(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("launch")
	install(t, c.Config, ns)
	admin := kubernetes.NewForConfigOrDie(c.Config)
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	create := func(sa string, job *batchv1.Job) error {
		_, err := as(c.Config, ns, sa).BatchV1().Jobs(ns).Create(context.Background(), job, dry)
		return err
	}
	// The policy takes effect a moment after it is created: wait until it refuses.
	outside := sessionJob(t, admin, ns, "boss", "s-outside")
	deadline := time.Now().Add(60 * time.Second)
	for err := create("triage", outside); !apierrors.IsInvalid(err) && !strings.Contains(fmt.Sprint(err), "agent:launch"); err = create("triage", outside) {
		if time.Now().After(deadline) {
			t.Fatalf("triage (agent:launch@worker_1) launched boss: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := create("triage", sessionJob(t, admin, ns, "worker_1", "s-in")); err != nil {
		t.Errorf("triage cannot launch worker_1, which its scope names: %v", err)
	}
	if err := create("boss", sessionJob(t, admin, ns, "triage", "s-boss")); err != nil {
		t.Errorf("boss (agent:launch) cannot launch triage: %v", err)
	}
	tamper := map[string]func(*corev1.PodSpec){
		"another ServiceAccount": func(s *corev1.PodSpec) { s.ServiceAccountName = "boss" },
		"another image":          func(s *corev1.PodSpec) { s.Containers[0].Image = "evil.example/x" },
		"a command":              func(s *corev1.PodSpec) { s.Containers[0].Command = []string{"sh", "-c", "id"} },
		"a secret as env": func(s *corev1.PodSpec) {
			s.Containers[0].Env = append(s.Containers[0].Env, corev1.EnvVar{Name: "K", ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "model"}, Key: "k"}}})
		},
		"a host path": func(s *corev1.PodSpec) {
			s.Volumes = append(s.Volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		},
		"the host network": func(s *corev1.PodSpec) { s.HostNetwork = true },
	}
	for what, change := range tamper {
		job := sessionJob(t, admin, ns, "worker_1", "s-tampered")
		change(&job.Spec.Template.Spec)
		if err := create("triage", job); err == nil || !strings.Contains(err.Error(), "template") {
			t.Errorf("a Job with %s was admitted: %v", what, err)
		}
	}
	// An unscoped launcher may launch every actor of the fleet, and no other ServiceAccount.
	foreign := sessionJob(t, admin, ns, "triage", "s-foreign")
	foreign.Labels[LabelActor], foreign.Spec.Template.Labels[LabelActor], foreign.Spec.Template.Spec.ServiceAccountName = "default", "default", "default"
	if err := create("boss", foreign); err == nil || !strings.Contains(err.Error(), "template") {
		t.Errorf("boss (agent:launch) launched a pod as the namespace's default ServiceAccount: %v", err)
	}
	if err := create("worker-1-ba7bf687", sessionJob(t, admin, ns, "worker_1", "s-self")); !apierrors.IsForbidden(err) {
		t.Errorf("worker_1 (no agent:launch) created a Job: %v", err)
	}
}

// TestCancelAndUpdateScopeIsAdmitted: a canceller and updater scoped to worker_1 may cancel
// (the runner's cancel patch) and suspend worker_1's sessions, and the admission policy refuses
// the same on triage's, an update that changes more than suspend, a cancel that changes more
// than a cancel does, a suspend by a canceller alone; no canceller may delete a session's Job
// (real requests as the ServiceAccount, dry run).
func TestCancelAndUpdateScopeIsAdmitted(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("cancel")
	install(t, c.Config, ns)
	admin := kubernetes.NewForConfigOrDie(c.Config)
	ctx := context.Background()
	for _, j := range []*batchv1.Job{sessionJob(t, admin, ns, "worker_1", "s-worker"), sessionJob(t, admin, ns, "triage", "s-triage")} {
		suspend := true
		j.Spec.Suspend = &suspend // kwok need not run them
		if _, err := admin.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patchAs := func(sa, name string, body map[string]any) error {
		js, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		_, err = as(c.Config, ns, sa).BatchV1().Jobs(ns).Patch(ctx, name, types.MergePatchType, js, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	cancelAs := func(sa, name string, edit func(map[string]any)) error {
		return dryRunCancel(t, c.Config, admin, ns, sa, name, edit)
	}
	resume := map[string]any{"spec": map[string]any{"suspend": false}}
	deadline := time.Now().Add(60 * time.Second)
	for err := cancelAs("janitor", "s-triage", nil); !strings.Contains(fmt.Sprint(err), "agent:cancel"); err = cancelAs("janitor", "s-triage", nil) {
		if time.Now().After(deadline) {
			t.Fatalf("janitor (agent:cancel@worker_1) cancelled triage's session: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, sa := range []string{"janitor", "stopper"} {
		if err := cancelAs(sa, "s-worker", nil); err != nil {
			t.Errorf("%s cannot cancel worker_1's session: %v", sa, err)
		}
		background := metav1.DeletePropagationBackground
		err := as(c.Config, ns, sa).BatchV1().Jobs(ns).Delete(ctx, "s-worker", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}, PropagationPolicy: &background})
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s deleted worker_1's session's Job: %v", sa, err)
		}
	}
	if err := patchAs("janitor", "s-worker", resume); err != nil {
		t.Errorf("janitor cannot resume worker_1's session: %v", err)
	}
	if err := patchAs("stopper", "s-worker", resume); err == nil || !strings.Contains(err.Error(), "agent:update") {
		t.Errorf("stopper (agent:cancel@worker_1 alone) resumed worker_1's session: %v", err)
	}
	if err := patchAs("janitor", "s-triage", resume); err == nil || !strings.Contains(err.Error(), "agent:update") {
		t.Errorf("janitor (agent:update@worker_1) resumed triage's session: %v", err)
	}
	if err := patchAs("janitor", "s-worker", map[string]any{"metadata": map[string]any{"labels": map[string]any{LabelActor: "triage"}}}); err == nil || !strings.Contains(err.Error(), "agent:update") {
		t.Errorf("janitor relabelled worker_1's session as triage's: %v", err)
	}
	// A cancel that does more than cancel: it keeps the session's pods, or relabels it.
	for what, edit := range map[string]func(map[string]any){
		"keeps its pods": func(p map[string]any) { p["spec"].(map[string]any)["parallelism"] = 1 },
		"relabels it": func(p map[string]any) {
			p["metadata"].(map[string]any)["labels"] = map[string]any{LabelActor: "triage"}
		},
		"drops an annotation": func(p map[string]any) {
			p["metadata"].(map[string]any)["annotations"].(map[string]any)[AnnotationParams] = nil
		},
	} {
		if err := cancelAs("stopper", "s-worker", edit); err == nil || !strings.Contains(err.Error(), "agent:cancel") {
			t.Errorf("stopper's cancel that %s was admitted: %v", what, err)
		}
	}
}
