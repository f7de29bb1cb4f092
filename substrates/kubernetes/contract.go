// Package kubernetes is the Kubernetes substrate: compile writes a kustomization that
// `kubectl apply -k` installs into one namespace (per actor a ServiceAccount, a Role and
// RoleBinding computed from its capabilities, a PodTemplate its sessions start from and, for
// cron triggers, a CronJob; a ConfigMap with the installation; a NetworkPolicy), and its Runner
// drives sessions as Jobs through client-go. See docs/kubernetes.md.
//
// The files follow DESIGN.md: compile.go (the kustomization), realize.go (what an installation
// realizes), runner.go (the Runner), support.go (the support declaration), and this file,
// contract.go: the names and the Job template both halves share, so compile and the runner can
// never disagree on a label, an object name or the shape of a session's Job.
//
// # The contract
//
// One fleet is installed per namespace (policy.box.kubernetes.namespace). Every object autonomy
// installs carries LabelFleet (the namespace) and LabelManaged. An actor's objects are named
// ObjectName(actor) and carry LabelActor = ObjectName(actor) and AnnotationActor = the actor's
// name verbatim (an actor name may hold "_", which no object name or label may end with).
//
// The template is read from the cluster, never from the profile: an actor's PodTemplate
// (ObjectName(actor), kind PodTemplate, core/v1) holds the pod a session of it runs, and
// AnnotationTimeout on it holds the actor's timeout. JobTemplate turns that PodTemplate into the
// batchv1.JobTemplateSpec; compile puts that spec into the actor's CronJob, and the runner
// builds a session's Job from the same spec with SessionJob. So an in-cluster launcher (a
// session holding agent:launch) needs only `get` on the PodTemplates it may launch from, not the
// profile, and a CronJob's Jobs and a launched session's Jobs are the same shape by construction.
//
// A session's params become env entries of the session container (ContainerName), appended
// after the template's own, never interpolated into the container's command or args.
package kubernetes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Name is the target name; Alias its short spelling.
const (
	Name  = "kubernetes"
	Alias = "k8s"
)

// Label keys. Values are label-safe: the fleet is its namespace, an actor is ObjectName(actor),
// a session is its id (the runner's, a DNS label).
const (
	LabelFleet   = "autonomy.dev/fleet"
	LabelActor   = "autonomy.dev/actor"
	LabelSession = "autonomy.dev/session"
	// LabelComponent says what an object is for: ComponentSession on a session's Job and pod,
	// ComponentModelProxy on the model proxy's pods (the NetworkPolicy admits egress to them).
	LabelComponent = "autonomy.dev/component"
	// LabelManaged marks every object autonomy installs (value "autonomy"), for pruning.
	LabelManaged = "app.kubernetes.io/managed-by"
)

// Label values.
const (
	ComponentSession    = "session"
	ComponentModelProxy = "model-proxy"
	ManagedBy           = "autonomy"
)

// Annotation keys. Annotations hold what labels cannot: exact names and free text.
const (
	// AnnotationActor is the actor's name verbatim.
	AnnotationActor = "autonomy.dev/actor-name"
	// AnnotationTimeout is the actor's timeout in seconds (the Job's activeDeadlineSeconds), on
	// its PodTemplate.
	AnnotationTimeout = "autonomy.dev/timeout-seconds"
	// AnnotationKeepFinished is, on an actor's PodTemplate, how many seconds a session's Job (and
	// its pod, which holds the result) outlives the session's end: the Job's
	// ttlSecondsAfterFinished (policy.box.kubernetes.keepFinished). Absent: kept until deleted.
	AnnotationKeepFinished = "autonomy.dev/keep-finished-seconds"
	// AnnotationRef is a session's subject.ref, verbatim (a ref may be any text), for people
	// reading the Job; the runner reads the ref from the container's env (EnvRef), which the
	// admission policy vetted.
	AnnotationRef = "autonomy.dev/ref"
	// AnnotationParams is a session's params as a JSON object, for people reading the Job; get
	// reads them back from the container's env entries, which the admission policy vetted.
	AnnotationParams = "autonomy.dev/params"
	// AnnotationSource names the profile and its hash on every generated object.
	AnnotationSource = "autonomy.dev/source"
	// AnnotationCompile is, on the fleet's Namespace, the hash of the compile that wrote it
	// (compileHash: "sha256:" and the hex sha256 of every object of the compile, this annotation
	// left out). kubernetes prune deletes nothing unless the folder it reads hashes to it and the
	// cluster's Namespace carries it: the cluster holds that very compile.
	AnnotationCompile = "autonomy.dev/compile"
	// AnnotationCancelled marks a session's Job cancelled (the time of the cancel, RFC 3339): the
	// Job is kept, readable as cancelled, until its ttlSecondsAfterFinished removes it.
	AnnotationCancelled = "autonomy.dev/cancelled"
)

// Object names shared by the fleet.
const (
	// ConfigMapInstall holds the installation: behaviors, skills, resources, the policy, each
	// file under a key InstallKey(path), mounted at InstallDir with its path restored.
	ConfigMapInstall = "autonomy-install"
	// ConfigMapFleet holds the runner's config of the fleet (FleetConfigKey: JSON).
	ConfigMapFleet = "autonomy-fleet"
	// FleetConfigKey is the ConfigMapFleet key holding the fleet config.
	FleetConfigKey = "fleet.json"
	// PodSecurityEnforce is the namespace label Pod Security Admission enforces: the fleet's
	// namespace is "restricted".
	PodSecurityEnforce = "pod-security.kubernetes.io/enforce"
	// DefaultDenyPolicyName is the NetworkPolicy selecting every pod of the namespace and
	// admitting nothing; ModelProxyPolicyName the one admitting the model proxy's traffic.
	DefaultDenyPolicyName = "autonomy-default-deny"
	ModelProxyPolicyName  = "autonomy-model-proxy"
	// NetworkPolicyName is the policy selecting every session pod of the fleet.
	NetworkPolicyName = "autonomy-sessions"
	// ContainerName is a session pod's one container.
	ContainerName = "session"
	// InstallDir is where ConfigMapInstall is mounted in a session's container.
	InstallDir = "/autonomy"
	// InstallVolume is the volume of ConfigMapInstall.
	InstallVolume = "install"
	// ModelProxyPort is the port of the model proxy the NetworkPolicy admits.
	ModelProxyPort = 8787
)

// SessionArgs is what a session's container runs: the in-pod session entry point of autonomy,
// which reads the session from its env (EnvSession, EnvActor, EnvParams). No param, ref or other
// session text ever appears in it.
var SessionArgs = []string{"autonomy", "runner", "--target", Name, "session"}

// The env a session's container receives from SessionJob besides the params.
const (
	EnvSession = "AUTONOMY_SESSION"
	EnvActor   = "AUTONOMY_ACTOR"
	EnvRef     = "AUTONOMY_REF"
	// EnvParams is the params as one JSON object (the same as AUTONOMY_FORWARD on local).
	EnvParams = "AUTONOMY_FORWARD"
	EnvDir    = "AUTONOMY_DIR"
	// EnvTermination is the session container's termination message file (TerminationLog),
	// where the session entry point writes the result the runner reads (runner_result.go).
	EnvTermination = "AUTONOMY_TERMINATION_LOG"
)

// TerminationLog is the termination message file a PodTemplate sets on its session container.
const TerminationLog = "/dev/termination-log"

// maxObjectBase bounds the readable part of an object name: a CronJob's name is at most 52
// characters (its Jobs append 11), and the hash suffix takes 9.
const maxObjectBase = 40

// ObjectName is the name of an actor's ServiceAccount, Role, RoleBinding, PodTemplate and
// CronJob: the actor's name when it is a valid DNS label of at most 40 characters, else a
// readable prefix plus a hash of the name, so two actors never share one ("a_b" and "a-b").
func ObjectName(actor string) string {
	s := strings.ReplaceAll(actor, "_", "-")
	if s == actor && len(s) <= maxObjectBase && !strings.HasSuffix(s, "-") {
		return s
	}
	if len(s) > maxObjectBase {
		s = s[:maxObjectBase]
	}
	sum := sha256.Sum256([]byte(actor))
	return strings.TrimRight(s, "-") + "-" + hex.EncodeToString(sum[:4])
}

// InstallKey is the ConfigMapInstall key of an installed file (slash-separated path): keys may
// not hold "/", so it is the path's base name, made key-safe, plus a hash of the whole path.
func InstallKey(path string) string {
	base := path[strings.LastIndex(path, "/")+1:]
	b := []byte(base)
	for i, c := range b {
		if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	if len(b) > 40 {
		b = b[len(b)-40:]
	}
	sum := sha256.Sum256([]byte(path))
	return hex.EncodeToString(sum[:6]) + "-" + string(b)
}

// FleetLabels are the labels of every object of the fleet in namespace ns.
func FleetLabels(ns string) map[string]string {
	return map[string]string{LabelFleet: ns, LabelManaged: ManagedBy}
}

// ActorLabels are the labels of an actor's objects.
func ActorLabels(ns, actor string) map[string]string {
	l := FleetLabels(ns)
	l[LabelActor] = ObjectName(actor)
	return l
}

// JobTemplate is the Job every session of the actor whose PodTemplate is pt runs: pt's pod,
// labelled as a session of that actor, never restarted (a session is one attempt: backoffLimit
// 0, restartPolicy Never), ended after the timeout AnnotationTimeout holds, deleted with its pod
// the seconds AnnotationKeepFinished holds after it ended (kept until deleted without it).
// Compile puts it in the actor's CronJob; SessionJob builds a launched session's Job from it.
func JobTemplate(pt *corev1.PodTemplate) batchv1.JobTemplateSpec {
	labels := map[string]string{}
	for k, v := range pt.Labels {
		labels[k] = v
	}
	labels[LabelComponent] = ComponentSession
	ann := map[string]string{AnnotationActor: pt.Annotations[AnnotationActor]}
	pod := *pt.Template.DeepCopy()
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	for k, v := range labels {
		pod.Labels[k] = v
	}
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	backoff := int32(0)
	spec := batchv1.JobSpec{BackoffLimit: &backoff, Template: pod}
	if t, err := strconv.ParseInt(pt.Annotations[AnnotationTimeout], 10, 64); err == nil && t > 0 {
		spec.ActiveDeadlineSeconds = &t
	}
	if t, err := strconv.ParseInt(pt.Annotations[AnnotationKeepFinished], 10, 32); err == nil && t > 0 {
		ttl := int32(t)
		spec.TTLSecondsAfterFinished = &ttl
	}
	return batchv1.JobTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: ann}, Spec: spec}
}

// Session is what SessionJob needs of a launched session.
type Session struct {
	// ID is the runner's session id: a DNS label (it names the Job and labels it).
	ID     string
	Ref    string
	Params map[string]string
}

// SessionJob is the Job of session s, built from the actor's JobTemplate t in namespace ns:
// named s.ID (so its pods' EnvSession, read from the Job's name, is s.ID), labelled
// LabelSession, its ref and params in annotations and in the session container's env
// (WithParams; get reads them back from the env).
func SessionJob(ns string, t batchv1.JobTemplateSpec, s Session) *batchv1.Job {
	t = WithParams(t, s.Ref, s.Params)
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: s.ID, Namespace: ns, Labels: t.Labels, Annotations: t.Annotations},
		Spec:       t.Spec,
	}
	job.Labels[LabelSession] = s.ID
	job.Spec.Template.Labels[LabelSession] = s.ID
	return job
}

// WithParams is t with a session's ref and params: in annotations (AnnotationRef,
// AnnotationParams) and as env of the session container, each param its own entry in sorted
// order after the template's env, then EnvRef and EnvParams (all params as one JSON object). A
// param named like an env entry the template or autonomy sets is not added: it cannot override
// them. Compile uses it for a cron trigger's params, SessionJob for a launch's.
func WithParams(t batchv1.JobTemplateSpec, ref string, params map[string]string) batchv1.JobTemplateSpec {
	t = *t.DeepCopy()
	js, _ := json.Marshal(params)
	if params == nil {
		js = []byte("{}")
	}
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	if t.Spec.Template.Labels == nil {
		t.Spec.Template.Labels = map[string]string{}
	}
	if ref != "" {
		t.Annotations[AnnotationRef] = ref
	}
	t.Annotations[AnnotationParams] = string(js)
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i := range t.Spec.Template.Spec.Containers {
		c := &t.Spec.Template.Spec.Containers[i]
		if c.Name != ContainerName {
			continue
		}
		taken := map[string]bool{EnvRef: true, EnvParams: true}
		for _, e := range c.Env {
			taken[e.Name] = true
		}
		for _, k := range keys {
			if !taken[k] {
				c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: params[k]})
			}
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: EnvRef, Value: ref}, corev1.EnvVar{Name: EnvParams, Value: string(js)})
	}
	return t
}

// SessionEnv is the env every session container starts with, set in its PodTemplate: its
// session id (the Job's name, through the downward API, so a CronJob's Jobs have one too), its
// actor, and where the installation is mounted.
func SessionEnv(actor string) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: EnvSession, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels['" + batchv1.JobNameLabel + "']"}}},
		{Name: EnvActor, Value: actor},
		{Name: EnvDir, Value: InstallDir},
		{Name: EnvTermination, Value: TerminationLog},
	}
}
