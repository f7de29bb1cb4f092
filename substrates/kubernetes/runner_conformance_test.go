package kubernetes_test

import (
	"context"
	"testing"

	"github.com/autonomyhq/autonomy/conformance"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/kubernetes"
)

// TestRunnerPassesTheCoreChecks runs the conformance battery's core checks (and get, pause and
// maxConcurrent) against the Kubernetes runner on a real API server, each check in a namespace of
// its own.
func TestRunnerPassesTheCoreChecks(t *testing.T) {
	cs, _ := kubernetes.ClusterClient(t)
	target := conformance.Target{Name: "kubernetes", Substrate: kubernetes.Name, New: func(ctx context.Context) (*substrates.ProbeSubject, error) {
		ns := kubernetes.ClusterNamespace(t, cs)
		kubernetes.InstallTemplates(t, cs, kubernetes.SessionPodTemplate(ns, "probe", kubernetes.Held))
		r, err := kubernetes.NewRunner(kubernetes.RunnerOptions{Client: cs, Namespace: ns, Actors: []kubernetes.RunnerActor{{Name: "probe"}}, MaxConcurrent: 2})
		if err != nil {
			return nil, err
		}
		return &substrates.ProbeSubject{Runner: r, Actor: "probe", MaxConcurrent: 2, NotProbed: "not in this test", Close: func() {}}, nil
	}}
	for _, res := range conformance.Run(context.Background(), []conformance.Target{target}) {
		want := conformance.Pass
		switch res.Check {
		case "get", "pause-resume", "max-concurrent":
			want = conformance.Supported
		case "timeout", "isolation", "params-env":
			want = conformance.NotProbed
		}
		if res.Outcome != want {
			t.Errorf("%s: %s (%s), want %s", res.Check, res.Outcome, res.Reason, want)
		}
	}
}
