package kubernetes

import (
	"context"
	"runtime"
	"testing"

	"github.com/autonomyhq/autonomy/internal/k8stest"
	"github.com/autonomyhq/autonomy/ir"
)

// TestEntryPointResultMakesTheSessionDone: a session the runner launches from the compiled
// PodTemplate runs through kwok; its Job's container, run as a process, writes the termination
// message, which the test (playing the kubelet) copies into the pod's status: the session is
// done with the result the script wrote, and failed when the entry point wrote its reason.
func TestEntryPointResultMakesTheSessionDone(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a script behavior runs with sh")
	}
	cs, _ := ClusterClient(t)
	ns := namespace("entry")
	objs := compiledSessionFleet(t, ns)
	apply(t, k8stest.Get(t).Config, objs) // the whole fleet: the session's ServiceAccount, its ConfigMaps
	r, err := OpenRunner(context.Background(), cs, ns, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for mode, want := range map[string]ir.SessionStatus{"ok": ir.Done, "invalid": ir.Failed} {
		t.Run(mode, func(t *testing.T) {
			s, err := r.LaunchRef(ctx, "worker_1", "", ir.LaunchParams{"MODE": mode, "VERDICT": "approve"})
			if err != nil {
				t.Fatal(err)
			}
			code, msg := runJobPod(t, objs, mustJob(t, cs, ns, s.ID))
			if (code == 0) != (want == ir.Done) {
				t.Fatalf("the entry point exited %d: %q", code, msg)
			}
			writeResult(t, cs, sessionPod(t, cs, ns, s.ID), msg)
			got, ok, err := r.Get(ctx, s.ID)
			if err != nil || !ok || got.Status != want {
				t.Fatalf("session with termination message %q: %+v %v %v, want %s", msg, got, ok, err, want)
			}
		})
	}
}
