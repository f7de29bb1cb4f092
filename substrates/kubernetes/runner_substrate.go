package kubernetes

import (
	"context"

	"github.com/autonomyhq/autonomy/substrates"
)

// RunVerb runs a runner verb on the fleet installed in the cluster (substrates.RunnerVerbs), for
// `autonomy runner --target kubernetes` (runner_verbs.go).
func (Substrate) RunVerb(ctx context.Context, call substrates.RunnerCall) error {
	return runVerb(ctx, call)
}

// ProbeTargets are the Kubernetes runner's conformance targets (substrates.Prober), against the
// cluster of $AUTONOMY_K8S_KUBECONFIG (runner_probe.go).
func (Substrate) ProbeTargets(env substrates.ProbeEnv) ([]substrates.ProbeTarget, error) {
	return probeTargets(env)
}
