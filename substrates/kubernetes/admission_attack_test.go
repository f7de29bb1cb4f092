package kubernetes

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/autonomyhq/autonomy/internal/k8stest"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// launchTampers are launched Jobs that differ from the actor's template in a way that would let
// a launcher run a command, gain a privilege, leave the network policy or escape the Job's
// limits as the launched actor: the admission policy refuses each.
var launchTampers = map[string]func(*batchv1.Job){
	"postStart exec": func(j *batchv1.Job) {
		j.Spec.Template.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "id"}}}}
	},
	"preStop exec": func(j *batchv1.Job) {
		j.Spec.Template.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"id"}}}}
	},
	"liveness exec": func(j *batchv1.Job) {
		j.Spec.Template.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"id"}}}}
	},
	"startup exec": func(j *batchv1.Job) {
		j.Spec.Template.Spec.Containers[0].StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"id"}}}}
	},
	"container runs as root": func(j *batchv1.Job) {
		zero, no := int64(0), false
		j.Spec.Template.Spec.Containers[0].SecurityContext.RunAsUser = &zero
		j.Spec.Template.Spec.Containers[0].SecurityContext.RunAsNonRoot = &no
	},
	"pod runs as root": func(j *batchv1.Job) {
		zero, no := int64(0), false
		j.Spec.Template.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: &zero, RunAsNonRoot: &no}
	},
	"SYS_ADMIN": func(j *batchv1.Job) {
		j.Spec.Template.Spec.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"SYS_ADMIN"}
	},
	"allowPrivilegeEscalation": func(j *batchv1.Job) {
		yes := true
		j.Spec.Template.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = &yes
	},
	"seccomp Unconfined": func(j *batchv1.Job) {
		j.Spec.Template.Spec.Containers[0].SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
	},
	"pod labelled model-proxy": func(j *batchv1.Job) { j.Spec.Template.Labels[LabelComponent] = ComponentModelProxy },
	"pod with an extra label":  func(j *batchv1.Job) { j.Spec.Template.Labels["app"] = "x" },
	"env overrides AUTONOMY_BEHAVIOR": func(j *batchv1.Job) {
		e := &j.Spec.Template.Spec.Containers[0].Env
		*e = append(*e, corev1.EnvVar{Name: "AUTONOMY_BEHAVIOR", Value: "/autonomy/other"})
	},
	"env LD_PRELOAD":      func(j *batchv1.Job) { addEnv(j, "LD_PRELOAD", "/autonomy/x.so") },
	"env HTTPS_PROXY":     func(j *batchv1.Job) { addEnv(j, "HTTPS_PROXY", "http://10.1.2.3") },
	"env OPENAI_BASE_URL": func(j *batchv1.Job) { addEnv(j, "OPENAI_BASE_URL", "http://10.1.2.3") },
	"env PATH":            func(j *batchv1.Job) { addEnv(j, "PATH", "/tmp") },
	// ir.IsReservedEnv's names the policy's own list once missed: SHELLOPTS=xtrace with
	// PS4='$(id)' runs code on the first bash.
	"env SHELLOPTS":       func(j *batchv1.Job) { addEnv(j, "SHELLOPTS", "xtrace") },
	"env ps4":             func(j *batchv1.Job) { addEnv(j, "ps4", "$(id)") },
	"env BASHOPTS":        func(j *batchv1.Job) { addEnv(j, "BASHOPTS", "extdebug") },
	"env NODE_OPTIONS":    func(j *batchv1.Job) { addEnv(j, "NODE_OPTIONS", "--require /tmp/x.js") },
	"env GLIBC_TUNABLES":  func(j *batchv1.Job) { addEnv(j, "GLIBC_TUNABLES", "x") },
	"env XDG_CONFIG_HOME": func(j *batchv1.Job) { addEnv(j, "XDG_CONFIG_HOME", "/tmp") },
	"env NPM_CONFIG_X":    func(j *batchv1.Job) { addEnv(j, "NPM_CONFIG_X", "x") },
	"env LC_ALL":          func(j *batchv1.Job) { addEnv(j, "LC_ALL", "x") },
	"env MAKEFLAGS":       func(j *batchv1.Job) { addEnv(j, "MAKEFLAGS", "x") },
	"env from a field": func(j *batchv1.Job) {
		e := &j.Spec.Template.Spec.Containers[0].Env
		*e = append(*e, corev1.EnvVar{Name: "X", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}})
	},
	"nodeName and tolerations": func(j *batchv1.Job) {
		j.Spec.Template.Spec.NodeName = "control-plane"
		j.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	},
	"runtimeClassName": func(j *batchv1.Job) { s := "other"; j.Spec.Template.Spec.RuntimeClassName = &s },
	"hostPort": func(j *batchv1.Job) {
		j.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 22, HostPort: 22}}
	},
	"automount token":  func(j *batchv1.Job) { yes := true; j.Spec.Template.Spec.AutomountServiceAccountToken = &yes },
	"parallelism 50":   func(j *batchv1.Job) { n := int32(50); j.Spec.Parallelism = &n },
	"another deadline": func(j *batchv1.Job) { n := int64(10000000); j.Spec.ActiveDeadlineSeconds = &n },
	"backoffLimit 100": func(j *batchv1.Job) { n := int32(100); j.Spec.BackoffLimit = &n },
	"no component/session labels on Job": func(j *batchv1.Job) {
		delete(j.Labels, LabelComponent)
		delete(j.Labels, LabelSession)
	},
	"dnsPolicy None": func(j *batchv1.Job) {
		j.Spec.Template.Spec.DNSPolicy = corev1.DNSNone
		j.Spec.Template.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"10.1.2.3"}}
	},
	"terminationMessagePath": func(j *batchv1.Job) {
		j.Spec.Template.Spec.Containers[0].TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
		j.Spec.Template.Spec.Containers[0].TerminationMessagePath = "/tmp/x"
	},
	"workingDir and stdin": func(j *batchv1.Job) {
		j.Spec.Template.Spec.Containers[0].WorkingDir = "/autonomy"
		j.Spec.Template.Spec.Containers[0].Stdin = true
	},
	"imagePullSecrets": func(j *batchv1.Job) {
		j.Spec.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "model"}}
	},
	"generateName instead of name": func(j *batchv1.Job) { j.GenerateName = "s-"; j.Name = "" },
	"finalizer":                    func(j *batchv1.Job) { j.Finalizers = []string{"example.com/block"} },
	// What the runner reads of a session's Job besides its env: whose it is, which session,
	// cancelled or not, how long it is kept, who owns it.
	"actor-name of another actor": func(j *batchv1.Job) { j.Annotations[AnnotationActor] = "boss" },
	"another session's label":     func(j *batchv1.Job) { j.Labels[LabelSession] = "s-other" },
	"cancelled at create":         func(j *batchv1.Job) { j.Annotations[AnnotationCancelled] = "2026-01-01T00:00:00Z" },
	"another annotation":          func(j *batchv1.Job) { j.Annotations["example.com/x"] = "y" },
	"pod annotation":              func(j *batchv1.Job) { j.Spec.Template.Annotations = map[string]string{"example.com/x": "y"} },
	"kept forever":                func(j *batchv1.Job) { j.Spec.TTLSecondsAfterFinished = nil },
	// The template's limits: without them a session takes the node's CPU, memory or disk.
	"no ephemeral-storage limit": func(j *batchv1.Job) {
		delete(j.Spec.Template.Spec.Containers[0].Resources.Limits, corev1.ResourceEphemeralStorage)
	},
	"a larger ephemeral-storage limit": func(j *batchv1.Job) {
		j.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceEphemeralStorage] = resource.MustParse("1Ti")
	},
	"no memory limit": func(j *batchv1.Job) {
		delete(j.Spec.Template.Spec.Containers[0].Resources.Limits, corev1.ResourceMemory)
	},
	"owner reference": func(j *batchv1.Job) {
		j.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: ConfigMapFleet, UID: "00000000-0000-0000-0000-000000000000"}}
	},
}

func addEnv(j *batchv1.Job, name, value string) {
	e := &j.Spec.Template.Spec.Containers[0].Env
	*e = append(*e, corev1.EnvVar{Name: name, Value: value})
}

// TestLaunchIsTheTemplate: a launcher (triage, agent:launch@worker_1) creating, as its
// ServiceAccount (dry run), a Job of worker_1 built from worker_1's template is admitted, and one
// changed in any of launchTampers's ways is refused by the admission policy.
func TestLaunchIsTheTemplate(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("shape")
	install(t, c.Config, ns)
	admin := kubernetes.NewForConfigOrDie(c.Config)
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	create := func(job *batchv1.Job) error {
		_, err := as(c.Config, ns, "triage").BatchV1().Jobs(ns).Create(context.Background(), job, dry)
		return err
	}
	waitPolicy(t, func() error { return create(sessionJob(t, admin, ns, "boss", "s-outside")) })
	// worker_1's launches have a policy of their own, which takes effect on its own time.
	waitPolicy(t, func() error {
		job := sessionJob(t, admin, ns, "worker_1", "s-waiting")
		job.Annotations["example.com/x"] = "y"
		return create(job)
	})
	if err := create(sessionJob(t, admin, ns, "worker_1", "s-ok")); err != nil {
		t.Fatalf("the template's own Job is refused: %v", err)
	}
	for what, change := range launchTampers {
		job := sessionJob(t, admin, ns, "worker_1", "s-tampered")
		change(job)
		if err := create(job); err == nil {
			t.Errorf("admitted a launch with %s", what)
		} else if !strings.Contains(err.Error(), "denied request") {
			t.Errorf("%s: refused, but not by the admission policy: %v", what, err)
		}
	}
	// triage's template has a timeout: boss (agent:launch) may not drop it.
	job := sessionJob(t, admin, ns, "triage", "s-nodeadline")
	job.Spec.ActiveDeadlineSeconds = nil
	if _, err := as(c.Config, ns, "boss").BatchV1().Jobs(ns).Create(context.Background(), job, dry); err == nil || !strings.Contains(err.Error(), "denied request") {
		t.Errorf("boss launched triage without its deadline: %v", err)
	}
	if _, err := as(c.Config, ns, "boss").BatchV1().Jobs(ns).Create(context.Background(), sessionJob(t, admin, ns, "triage", "s-deadline"), dry); err != nil {
		t.Errorf("boss cannot launch triage from its template: %v", err)
	}
}

// TestUpdateIsSuspendOnly: janitor (agent:update@worker_1) may suspend worker_1's session, and
// the admission policy refuses a patch that changes anything else.
func TestUpdateIsSuspendOnly(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("update")
	install(t, c.Config, ns)
	admin := kubernetes.NewForConfigOrDie(c.Config)
	ctx := context.Background()
	j := sessionJob(t, admin, ns, "worker_1", "s-worker")
	yes := true
	j.Spec.Suspend = &yes
	if _, err := admin.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	janitor := as(c.Config, ns, "janitor").BatchV1().Jobs(ns)
	patch := func(body string) error {
		_, err := janitor.Patch(ctx, "s-worker", types.MergePatchType, []byte(body), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	waitPolicy(t, func() error { return patch(`{"spec":{"backoffLimit":100}}`) })
	if err := patch(`{"spec":{"suspend":false}}`); err != nil {
		t.Fatalf("resuming is refused: %v", err)
	}
	for what, body := range map[string]string{
		"parallelism":     `{"spec":{"parallelism":50}}`,
		"activeDeadline":  `{"spec":{"activeDeadlineSeconds":10000000}}`,
		"finalizer":       `{"metadata":{"finalizers":["example.com/block"]}}`,
		"annotations":     `{"metadata":{"annotations":{"autonomy.dev/params":"{\"X\":\"forged\"}","autonomy.dev/ref":"#999"}}}`,
		"ownerReferences": `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"autonomy-fleet","uid":"00000000-0000-0000-0000-000000000000"}]}}`,
		"labels":          `{"metadata":{"labels":{"app":"x"}}}`,
	} {
		if err := patch(body); err == nil {
			t.Errorf("admitted an update of %s", what)
		}
	}
}

// waitPolicy waits until call is denied by the fleet's admission policy, which takes effect a
// moment after it is created.
func waitPolicy(t *testing.T, call func() error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for err := call(); err == nil || !strings.Contains(err.Error(), "denied request"); err = call() {
		if time.Now().After(deadline) {
			t.Fatalf("the admission policy never took effect: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestNamespaceIsRestricted: Pod Security Admission enforces "restricted" in the fleet's
// namespace, whoever creates the pod (here the cluster admin, dry run): a pod of an actor's
// template is admitted, and one running as root, adding a capability, escalating privilege,
// unconfined or on a host port is refused.
func TestNamespaceIsRestricted(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("psa")
	install(t, c.Config, ns)
	admin := kubernetes.NewForConfigOrDie(c.Config)
	pod := func() *corev1.Pod {
		j := sessionJob(t, admin, ns, "worker_1", "s-pod")
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns, Labels: j.Spec.Template.Labels}, Spec: j.Spec.Template.Spec}
	}
	create := func(p *corev1.Pod) error {
		_, err := admin.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	if err := create(pod()); err != nil {
		t.Fatalf("a pod of worker_1's template is refused: %v", err)
	}
	zero, yes := int64(0), true
	for what, change := range map[string]func(*corev1.Pod){
		"root": func(p *corev1.Pod) {
			p.Spec.SecurityContext.RunAsUser = &zero
			p.Spec.SecurityContext.RunAsNonRoot = nil
		},
		"SYS_ADMIN": func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"SYS_ADMIN"}
		},
		"privilege escalation": func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = &yes },
		"seccomp Unconfined": func(p *corev1.Pod) {
			p.Spec.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		},
		"hostPort": func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 22, HostPort: 22}}
		},
	} {
		p := pod()
		change(p)
		if err := create(p); err == nil || !strings.Contains(err.Error(), "PodSecurity") {
			t.Errorf("a pod with %s is not refused by Pod Security: %v", what, err)
		}
	}
}

// TestNamespaceDeniesByDefault: the compiled fleet holds a NetworkPolicy selecting every pod of
// the namespace with no rule (a pod the sessions' policy does not select reaches nothing), and
// one letting only the fleet's sessions reach the model proxy's port.
func TestNamespaceDeniesByDefault(t *testing.T) {
	objs := compiledObjects(t, writeFleet(t, fleetProfile))
	var deny, proxy networkingv1.NetworkPolicy
	if err := object(objs, "NetworkPolicy", DefaultDenyPolicyName, &deny); err != nil {
		t.Fatal(err)
	}
	if len(deny.Spec.PodSelector.MatchLabels) != 0 || len(deny.Spec.PodSelector.MatchExpressions) != 0 || len(deny.Spec.Ingress) != 0 || len(deny.Spec.Egress) != 0 ||
		!slices.Equal(deny.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}) {
		t.Errorf("default deny = %+v, want every pod, both directions, no rule", deny.Spec)
	}
	if err := object(objs, "NetworkPolicy", ModelProxyPolicyName, &proxy); err != nil {
		t.Fatal(err)
	}
	if proxy.Spec.PodSelector.MatchLabels[LabelComponent] != ComponentModelProxy || len(proxy.Spec.Ingress) != 1 ||
		proxy.Spec.Ingress[0].From[0].PodSelector.MatchLabels[LabelComponent] != ComponentSession || proxy.Spec.Ingress[0].Ports[0].Port.IntValue() != ModelProxyPort {
		t.Errorf("model proxy policy = %+v, want ingress from the sessions on %d only", proxy.Spec, ModelProxyPort)
	}
}

// TestScopedListIsDeclaredPartial: RBAC grants agent:list@ACTOR the namespace's every Job, pod
// and log (no admission policy sees a read), so the support declaration must not claim scopes
// are enforced and must say so of agent:list.
func TestScopedListIsDeclaredPartial(t *testing.T) {
	for _, s := range support {
		if s.Feature == "capability:@scope" && (s.Level == substrates.Supported || !strings.Contains(s.Note, "agent:list scope is not enforced by the API")) {
			t.Errorf("capability:@scope is declared %s: %q", s.Level, s.Note)
		}
	}
}

// TestSessionCannotSetWhoFiredIt: a launcher (triage, agent:launch@worker_1) creating, as its
// ServiceAccount (dry run), a Job of worker_1 whose params bound to subject.actor and
// subject.actorRole (WHO, ROLE) are triage and NONE is admitted; one naming another actor, or
// another role, is refused by the admission policy, as the runner refuses them.
func TestSessionCannotSetWhoFiredIt(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("gating")
	install(t, c.Config, ns)
	admin := kubernetes.NewForConfigOrDie(c.Config)
	pt, err := admin.CoreV1().PodTemplates(ns).Get(context.Background(), ObjectName("worker_1"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	create := func(params map[string]string) error {
		job := SessionJob(ns, JobTemplate(pt), Session{ID: "s-gating", Params: params})
		_, err := as(c.Config, ns, "triage").BatchV1().Jobs(ns).Create(context.Background(), job, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	waitPolicy(t, func() error { return create(map[string]string{"WHO": "triage", "ROLE": "OWNER"}) })
	if err := create(map[string]string{"WHO": "triage", "ROLE": "NONE", "MODE": "x"}); err != nil {
		t.Fatalf("a session's launch with its own actor and NONE is refused: %v", err)
	}
	for _, forged := range []map[string]string{{"WHO": "triage", "ROLE": "OWNER"}, {"WHO": "boss", "ROLE": "NONE"}, {"WHO": "", "ROLE": "NONE"}, {"ROLE": ""}} {
		if err := create(forged); err == nil || !strings.Contains(err.Error(), "denied request") {
			t.Errorf("a session's launch with %v: %v, want refused by the admission policy", forged, err)
		}
	}
}

// TestSessionCannotForgeItsParams: a Job a session's ServiceAccount (triage) creates itself, its
// env the values the admission policy admits (WHO triage, ROLE NONE) but its annotations claiming
// others (WHO boss, ROLE OWNER, another ref, a ref dropped), is refused; the same Job with the
// annotations SessionJob sets is admitted, and the runner's own launch reads back its ref and
// params verbatim.
func TestSessionCannotForgeItsParams(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("forge")
	install(t, c.Config, ns)
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(c.Config)
	pt, err := admin.CoreV1().PodTemplates(ns).Get(ctx, ObjectName("worker_1"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checked := ir.LaunchParams{"WHO": "triage", "ROLE": "NONE", "MODE": "x"}
	try := func(params ir.LaunchParams, forge func(map[string]string)) error {
		job := SessionJob(ns, JobTemplate(pt), Session{ID: "s-forged", Ref: "#1", Params: params})
		forge(job.Annotations)
		_, err := as(c.Config, ns, "triage").BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	create := func(forge func(map[string]string)) error { return try(checked, forge) }
	waitPolicy(t, func() error { return try(ir.LaunchParams{"WHO": "boss"}, func(map[string]string) {}) })
	if err := create(func(map[string]string) {}); err != nil {
		t.Fatalf("a session's launch with the annotations SessionJob sets is refused: %v", err)
	}
	for what, forge := range map[string]func(map[string]string){
		"params of another actor": func(a map[string]string) { a[AnnotationParams] = `{"MODE":"x","ROLE":"OWNER","WHO":"boss"}` },
		"params reordered":        func(a map[string]string) { a[AnnotationParams] = `{"WHO":"triage","ROLE":"NONE","MODE":"x"}` },
		"no params":               func(a map[string]string) { delete(a, AnnotationParams) },
		"another ref":             func(a map[string]string) { a[AnnotationRef] = "#999" },
		"no ref":                  func(a map[string]string) { delete(a, AnnotationRef) },
	} {
		if err := create(forge); err == nil || !strings.Contains(err.Error(), "denied request") {
			t.Errorf("a session's launch with %s in its annotations: %v, want refused by the admission policy", what, err)
		}
	}
	r, err := NewRunner(RunnerOptions{Client: runnerClient(t, c.Config), Namespace: ns,
		Actors: []RunnerActor{{Name: "worker_1", Params: []string{"MODE", "VERDICT", "WHO", "ROLE"}}}})
	if err != nil {
		t.Fatal(err)
	}
	verbatim := ir.LaunchParams{"WHO": "anyone", "ROLE": "OWNER", "MODE": "a \"quoted\" <b> & ünïcode"}
	s, err := r.LaunchRef(ctx, "worker_1", "#7", verbatim)
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := r.Get(ctx, s.ID)
	if err != nil || !ok || !reflect.DeepEqual(got.Params, verbatim) || got.Ref != "#7" {
		t.Errorf("get of the runner's launch = %+v %v %v, want params %v verbatim and ref #7", got, ok, err, verbatim)
	}
}
