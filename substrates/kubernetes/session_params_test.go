package kubernetes

import (
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestSessionRefusesAForwardedParam: the entry point runs nothing for a session whose forwarded
// params name an environment variable a tool reads (SHELLOPTS with PS4 runs code on the first
// bash), one the actor declares not, one only $AUTONOMY_FORWARD carries (not the container's
// env entry the admission policy vetted), or one only the env carries: the session fails saying
// why, though MODE=ok would otherwise have succeeded.
func TestSessionRefusesAForwardedParam(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a script behavior runs with sh")
	}
	objs := compiledSessionFleet(t, "fleet-a")
	for _, k := range []string{"SHELLOPTS", "PS4", "LD_PRELOAD", "NODE_OPTIONS", "BASH_ENV", "http_proxy"} {
		code, msg := podProcess(t, objs, "worker_1", "s-1", map[string]string{"MODE": "ok", "VERDICT": "x", k: "$(id)"})
		if code != 1 || !strings.Contains(msg, `param "`+k+`" is reserved`) || !strings.Contains(msg, "the session runs nothing") {
			t.Errorf("%s: exit %d, termination message %q, want exit 1 and the param refused", k, code, msg)
		}
	}
	code, msg := podProcess(t, objs, "worker_1", "s-1", map[string]string{"MODE": "ok", "EXTRA": "x"})
	if code != 1 || !strings.Contains(msg, `actor "worker_1" declares no param "EXTRA"`) {
		t.Errorf("undeclared: exit %d, termination message %q", code, msg)
	}
	// A forwarded JSON that names more than the env carries, another value, or less (a param
	// the admission policy checks, such as WHO, left out: the session would not see who fired it).
	for fwd, want := range map[string]string{`{"MODE":"ok","VERDICT":"x"}`: "is not the container's env entry", `{"MODE":"fail"}`: "is not the container's env entry",
		`{"MODE":"ok"}`: "the container's env entry WHO (a param) is not in $AUTONOMY_FORWARD"} {
		var pt corev1.PodTemplate
		if err := object(objs, "PodTemplate", ObjectName("worker_1"), &pt); err != nil {
			t.Fatal(err)
		}
		job := SessionJob("fleet-a", JobTemplate(&pt), Session{ID: "s-1", Params: map[string]string{"MODE": "ok", "WHO": "triage"}})
		env := job.Spec.Template.Spec.Containers[0].Env
		for i := range env {
			if env[i].Name == EnvParams {
				env[i].Value = fwd
			}
		}
		code, msg := runJobPod(t, objs, job)
		if code != 1 || !strings.Contains(msg, want) {
			t.Errorf("%s: exit %d, termination message %q", fwd, code, msg)
		}
	}
}
