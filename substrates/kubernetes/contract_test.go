package kubernetes

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// TestObjectNameIsAValidUniqueName: every actor name the standard accepts maps to a DNS label
// short enough for a CronJob (52), and distinct actors never share one.
func TestObjectNameIsAValidUniqueName(t *testing.T) {
	long := "a" + strings.Repeat("b", 62)
	names := []string{"triage", "a_b", "a-b", "a_", "a-", "x__", long, long[:62] + "c", "review_bot"}
	seen := map[string]string{}
	for _, a := range names {
		n := ObjectName(a)
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 || len(n) > 52 {
			t.Errorf("ObjectName(%q) = %q: not a CronJob name: %v", a, n, errs)
		}
		if errs := validation.IsValidLabelValue(n); len(errs) > 0 {
			t.Errorf("ObjectName(%q) = %q: not a label value: %v", a, n, errs)
		}
		if o, dup := seen[n]; dup {
			t.Errorf("actors %q and %q share the object name %q", o, a, n)
		}
		seen[n] = a
	}
	if ObjectName("triage") != "triage" {
		t.Errorf("a valid short name is not kept: %q", ObjectName("triage"))
	}
}

// TestInstallKeyIsAConfigMapKey: keys hold no "/" and distinct paths never share one.
func TestInstallKeyIsAConfigMapKey(t *testing.T) {
	paths := []string{"a/b/SKILL.md", "a/c/SKILL.md", "x y/ü.md", "r/" + strings.Repeat("n", 300) + ".md", ".autonomy/policy.json"}
	seen := map[string]bool{}
	for _, p := range paths {
		k := InstallKey(p)
		if errs := validation.IsConfigMapKey(k); len(errs) > 0 {
			t.Errorf("InstallKey(%q) = %q: %v", p, k, errs)
		}
		if seen[k] {
			t.Errorf("InstallKey(%q) = %q is taken", p, k)
		}
		seen[k] = true
	}
}

// TestSessionJobCarriesParamsAsEnvOnly: a hostile param reaches the container as one env value,
// verbatim, and never in its command or args; it cannot override the session's own env; get
// reads it back from the annotation.
func TestSessionJobCarriesParamsAsEnvOnly(t *testing.T) {
	pt := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "triage", Labels: ActorLabels("ns", "triage"),
		Annotations: map[string]string{AnnotationActor: "triage", AnnotationTimeout: "600"}},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: ContainerName, Image: "img", Args: SessionArgs, Env: SessionEnv("triage")}}}}}
	evil := "$(rm -rf /); `id` \"'\n"
	job := SessionJob("ns", JobTemplate(pt), Session{ID: "s-1", Ref: "#7", Params: map[string]string{"TOPIC": evil, EnvSession: "forged", EnvParams: "{}"}})
	c := job.Spec.Template.Spec.Containers[0]
	if !slices.Equal(c.Args, SessionArgs) || len(c.Command) != 0 {
		t.Errorf("command/args changed: %q %q", c.Command, c.Args)
	}
	env := map[string][]string{}
	for _, e := range c.Env {
		env[e.Name] = append(env[e.Name], e.Value)
	}
	if got := env["TOPIC"]; len(got) != 1 || got[0] != evil {
		t.Errorf("TOPIC env = %q, want the param verbatim once", got)
	}
	for _, k := range []string{EnvSession, EnvParams, EnvRef} {
		if len(env[k]) != 1 {
			t.Errorf("%s set %d times: %q", k, len(env[k]), env[k])
		}
	}
	if env[EnvSession][0] != "" || c.Env[0].ValueFrom == nil {
		t.Errorf("the session id is not read from the Job's name: %+v", c.Env[0])
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(job.Annotations[AnnotationParams]), &back); err != nil || back["TOPIC"] != evil {
		t.Errorf("params annotation = %q (%v)", job.Annotations[AnnotationParams], err)
	}
	if job.Name != "s-1" || job.Labels[LabelSession] != "s-1" || job.Spec.Template.Labels[LabelSession] != "s-1" || job.Labels[LabelActor] != "triage" {
		t.Errorf("job identity: %q %v %v", job.Name, job.Labels, job.Spec.Template.Labels)
	}
	if *job.Spec.BackoffLimit != 0 || *job.Spec.ActiveDeadlineSeconds != 600 || job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("job spec: %+v", job.Spec)
	}
	if len(pt.Template.Spec.Containers[0].Env) != len(SessionEnv("triage")) || pt.Template.Labels != nil {
		t.Errorf("the template was modified: %+v", pt.Template)
	}
}
