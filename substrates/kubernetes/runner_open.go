package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/autonomyhq/autonomy/internal/kubeclient"
	"github.com/autonomyhq/autonomy/substrates"
)

// Connect is where the runner's cluster is: a kubeconfig path (--kubeconfig; "" for the
// standard loading rules: $KUBECONFIG, else ~/.kube/config, else the pod's own ServiceAccount
// when run in a cluster) and a namespace (--namespace; "" for the kubeconfig context's, or the
// pod's, else DefaultNamespace).
type Connect struct {
	Kubeconfig, Namespace string
}

// Client connects to the cluster, returning a client and the namespace to use. Without any
// configuration it is an error saying where it looked.
func (c Connect) Client() (*kubeclient.Client, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = c.Kubeconfig
	over := &clientcmd.ConfigOverrides{}
	over.Context.Namespace = c.Namespace
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, over)
	cfg, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, "", errors.New("no cluster: no kubeconfig was found (give --kubeconfig, or set KUBECONFIG, or write ~/.kube/config) and this is not a pod in a cluster")
		}
		return nil, "", fmt.Errorf("no cluster: the kubeconfig: %w", err)
	}
	ns, explicit, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("the kubeconfig's namespace: %w", err)
	}
	if !explicit && c.Namespace == "" && ns == "default" {
		ns = DefaultNamespace // the fleet's own namespace, unless the context names one
	}
	cs, err := kubeclient.NewForConfig(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	return cs, ns, nil
}

// runnerFleet is what the runner reads of the installation's fleet config (ConfigMapFleet,
// FleetConfigKey).
type runnerFleet struct {
	MaxConcurrent int `json:"maxConcurrent"`
	Actors        []struct {
		Actor        string   `json:"actor"`
		Kind         string   `json:"kind"`
		Capabilities []string `json:"capabilities"`
		// Result is the path of its result contract in the installation (ConfigMapInstall).
		Result string `json:"result"`
		// Triggers declare its params.
		Triggers []Trigger `json:"triggers"`
	} `json:"actors"`
}

// OpenRunner opens the runner of the fleet installed in ns: its actors, their result contracts
// and maxConcurrent are read from the installation's ConfigMaps. caller is the actor calling
// from inside a session ("" for the operator): its capabilities bound every verb.
func OpenRunner(ctx context.Context, cs *kubeclient.Client, ns, caller string) (*Runner, error) {
	return openRunner(ctx, cs, cs, ns, caller)
}

// openRunner is OpenRunner acting with cs and reading the installation with config (the
// conformance probe's session runner: a session's ServiceAccount token acts, and the installation
// its pod would have mounted is read by the operator).
func openRunner(ctx context.Context, cs, config *kubeclient.Client, ns, caller string) (*Runner, error) {
	cms := config.CoreV1().ConfigMaps(ns)
	raw, err := readFleetConfig(ctx, cms, ns)
	if err != nil {
		return nil, err
	}
	var fleet runnerFleet
	if err := json.Unmarshal(raw, &fleet); err != nil {
		return nil, fmt.Errorf("the fleet config in ConfigMap %s/%s is not JSON: %v (compile and apply again)", ns, ConfigMapFleet, err)
	}
	opts := RunnerOptions{Client: cs, Namespace: ns, MaxConcurrent: fleet.MaxConcurrent}
	var install map[string]string
	for _, a := range fleet.Actors {
		ra := RunnerActor{Name: a.Actor, Human: a.Kind == "human", Params: declaredParams(a.Triggers), Sources: dispatchSources(a.Triggers)}
		if a.Actor == caller && caller != "" {
			opts.Caller = &substrates.Caller{Who: fmt.Sprintf("actor %q", caller), Caps: substrates.ParseCapabilities(a.Capabilities)}
			opts.CallerActor = caller
			opts.AskedBy = &Asker{Actor: caller, Session: os.Getenv(EnvSession)}
		}
		if a.Result != "" {
			raw, err := resultContract(ctx, cms, ns, a.Actor, a.Result, &install)
			if err != nil {
				return nil, err
			}
			if ra.Result, err = decodeSchema(raw); err != nil {
				return nil, fmt.Errorf("actor %q: its result contract %s is not JSON: %v", a.Actor, a.Result, err)
			}
		}
		opts.Actors = append(opts.Actors, ra)
	}
	if caller != "" && opts.Caller == nil {
		return nil, fmt.Errorf("%s=%q is not an actor of the fleet in namespace %s", EnvActor, caller, ns)
	}
	return NewRunner(opts)
}

// inPod reports whether this process runs in a session's pod, with the installation mounted at
// $AUTONOMY_DIR; it returns the mount.
func inPod() (string, bool) {
	dir := os.Getenv(EnvDir)
	return dir, dir != "" && os.Getenv(EnvSession) != ""
}

// readFleetConfig reads the fleet config: inside a session's pod from the mounted installation (a
// ServiceAccount holding agent:list alone may read no ConfigMap), else from ConfigMapFleet.
func readFleetConfig(ctx context.Context, cms *kubeclient.ConfigMaps, ns string) ([]byte, error) {
	if dir, ok := inPod(); ok {
		if data, err := os.ReadFile(filepath.Join(dir, FleetConfigKey)); err == nil {
			return data, nil
		}
	}
	cm, err := cms.Get(ctx, ConfigMapFleet, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("no fleet in namespace %s: ConfigMap %s is missing (install it: autonomy compile PROFILE --target kubernetes --dir DIR, then kubectl apply --server-side -k DIR/kubernetes; or name its namespace with --namespace)", ns, ConfigMapFleet)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the fleet in namespace %s (ConfigMap %s): %w", ns, ConfigMapFleet, err)
	}
	return []byte(cm.Data[FleetConfigKey]), nil
}

// resultContract reads an actor's result contract: inside a session's pod from the installation
// mounted at $AUTONOMY_DIR (its ServiceAccount may read no other ConfigMap than the fleet's),
// else from ConfigMap autonomy-install (read once into install).
func resultContract(ctx context.Context, cms *kubeclient.ConfigMaps, ns, actor, path string, install *map[string]string) ([]byte, error) {
	if dir, ok := inPod(); ok && filepath.IsLocal(filepath.FromSlash(path)) {
		if data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path))); err == nil {
			return data, nil
		}
	}
	if *install == nil {
		ic, err := cms.Get(ctx, ConfigMapInstall, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("reading the result contracts (ConfigMap %s/%s): %w", ns, ConfigMapInstall, err)
		}
		*install = ic.Data
	}
	raw, ok := (*install)[InstallKey(path)]
	if !ok {
		return nil, fmt.Errorf("actor %q: its result contract %s is not in ConfigMap %s/%s (compile and apply again)", actor, path, ns, ConfigMapInstall)
	}
	return []byte(raw), nil
}

// callerFromEnv is the actor a verb runs for: $AUTONOMY_ACTOR inside a session's pod (which
// SessionEnv sets), else "" (the operator).
func callerFromEnv() string {
	if os.Getenv(EnvSession) == "" {
		return ""
	}
	return strings.TrimSpace(os.Getenv(EnvActor))
}
