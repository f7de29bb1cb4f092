package kubernetes_test

import (
	"context"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/conformance"
	"github.com/autonomyhq/autonomy/internal/testbin"
	"github.com/autonomyhq/autonomy/substrates/kubernetes"
	_ "github.com/autonomyhq/autonomy/substrates/registry" // the probe fleet names every target
)

// TestRunnerPassesTheCoreChecks runs the conformance battery's core checks (and get, pause and
// maxConcurrent) against the Kubernetes runner on a real API server, each check in a namespace of
// its own.
func TestRunnerPassesTheCoreChecks(t *testing.T) {
	kubernetes.ClusterClient(t) // skips without a cluster
	exe := testbin.Path(t)
	targets, err := kubernetes.ProbeTargets(conformance.ProbeEnv(kubernetes.Substrate{}, "", exe))
	if err != nil || len(targets) != 2 || targets[0].Skip != "" || targets[1].Skip != "" {
		t.Fatalf("targets: %+v, %v", targets, err)
	}
	results := conformance.Run(context.Background(), targets)
	if len(results) != 21+10 {
		t.Errorf("%d results, want the 21 of an agent's runner and the 10 of a person's: %+v", len(results), results)
	}
	for _, res := range results {
		want := conformance.Pass
		switch res.Check {
		case "get", "pause-resume", "max-concurrent", "never-done-by-itself", "done-by-verified-act":
			want = conformance.Supported
		case "timeout":
			// The Job controller fails overtime's Job at its activeDeadlineSeconds.
			want = conformance.Supported
		case "isolation":
			// The session entry point's own workspace, in the pod the probe's kubelet plays.
			want = conformance.Supported
		case "simulated-person":
			want = conformance.NotProbed
		case "scope-refused", "agent-verbs":
			// From inside a session: a runner acting with the token of the session's actor's
			// ServiceAccount, under the Role and admission policies compile gave it.
			want = conformance.Supported
		case "params-env", "capabilities-carried", "result-validated":
			// Seen reads the session container's env as the API server admitted it; the
			// resulter's pods are run by the probe's kubelet (kwok runs no container).
			want = conformance.Supported
		case "cron-fires":
			// The fake clock's tick fires the CronJob the API server holds as its controller does.
			want = conformance.Pass
		case "param-sources", "session-sources":
			// A launch resolves every source into the session container's env; from a session,
			// the runner and the admission policy hold who fired it to the caller and NONE.
			want = conformance.Supported
		case "prelaunch", "merge-boundary":
			// No prelaunch and no code host on this runner.
			want = conformance.NotProbed
		}
		if res.Check == "prelaunch" && !strings.Contains(res.Reason, "prelaunch is unsupported") {
			t.Errorf("%s prelaunch: not probed for %q, want the reason it cannot be", res.Target, res.Reason)
		}
		if res.Outcome != want {
			t.Errorf("%s %s: %s (%s), want %s", res.Target, res.Check, res.Outcome, res.Reason, want)
		}
	}
}
