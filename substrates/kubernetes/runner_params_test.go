package kubernetes

import (
	"context"
	"reflect"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/autonomyhq/autonomy/ir"
)

// TestSessionReadsTheContainersParams: a session's ref and params read back from its Job are
// those of its container's env (what the admission policy vetted and the process runs with):
// annotations claiming others are not read, and neither is an env entry that is no declared
// param, a template entry, or one from a field; the last of two entries of one name counts, as
// the kubelet takes it. A Job the runner builds reads back its params verbatim.
func TestSessionReadsTheContainersParams(t *testing.T) {
	r := &Runner{actors: map[string]*RunnerActor{"worker_1": {Name: "worker_1", Params: []string{"WHO", "ROLE", "MODE"}}}}
	tmpl := batchv1.JobTemplateSpec{}
	tmpl.Annotations = map[string]string{AnnotationActor: "worker_1"}
	tmpl.Spec.Template.Spec.Containers = []corev1.Container{{Name: ContainerName, Env: SessionEnv("worker_1")}}
	verbatim := ir.LaunchParams{"WHO": "a \"b\" <c> & ünï\ncode", "ROLE": "", "MODE": "x"}
	job := SessionJob("fleet-a", tmpl, Session{ID: "s-1", Ref: "#7", Params: verbatim})
	if s, err := r.session(context.Background(), job, false); err != nil || !reflect.DeepEqual(s.Params, verbatim) || s.Ref != "#7" || s.Agent != "worker_1" {
		t.Errorf("the runner's Job reads back %+v (%v), want params %v and ref #7", s, err, verbatim)
	}
	job = SessionJob("fleet-a", tmpl, Session{ID: "s-2", Ref: "#1", Params: map[string]string{"WHO": "triage", "ROLE": "NONE"}})
	job.Annotations[AnnotationParams] = `{"ROLE":"OWNER","WHO":"boss"}`
	job.Annotations[AnnotationRef] = "#999"
	ctr := &job.Spec.Template.Spec.Containers[0]
	ctr.Env = append(ctr.Env, corev1.EnvVar{Name: "UNDECLARED", Value: "x"}, corev1.EnvVar{Name: "MODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		corev1.EnvVar{Name: "ROLE", Value: "LAST"})
	want := ir.LaunchParams{"WHO": "triage", "ROLE": "LAST"}
	if s, err := r.session(context.Background(), job, false); err != nil || !reflect.DeepEqual(s.Params, want) || s.Ref != "#1" {
		t.Errorf("a Job with forged annotations reads back %+v (%v), want params %v and ref #1 (its container's)", s, err, want)
	}
}
