package kubernetes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/autonomyhq/autonomy/internal/kubeclient"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// ClusterEnv names the kubeconfig of a cluster the conformance battery and the tests may create
// namespaces in (make k8s-test starts a real control plane and sets it). Unset, they do not run:
// the battery never touches the cluster of the operator's own kubeconfig.
const ClusterEnv = "AUTONOMY_K8S_KUBECONFIG"

// probeMax is the maxConcurrent of the probe fleet (conformance/probe).
const probeMax = 2

// heldSelector is a node selector no node has: a probe session's pod stays pending and its Job
// active until it is cancelled, as the battery's probe actor works until it is stopped. The
// battery probes the Runner contract, which the API server and the controllers realize; what a
// container does is the session's (its result: TestSessionIsDoneOnlyWithAValidResult).
var heldSelector = map[string]string{"autonomy.dev/probe-node": "none"}

// probeTargets are the Kubernetes runner under test, agent and human, against the cluster of $AUTONOMY_K8S_KUBECONFIG:
// each subject is a fresh namespace holding the probe actor's PodTemplate and the fleet config,
// deleted when the check is done. Its get check reads sessions back through another autonomy
// process when env.Exe is set.
func probeTargets(env substrates.ProbeEnv) ([]substrates.ProbeTarget, error) {
	path := os.Getenv(ClusterEnv)
	t := substrates.ProbeTarget{Name: "kubernetes", Substrate: Name, Remote: true}
	h := substrates.ProbeTarget{Name: "kubernetes human", Substrate: Name, Remote: true, Human: true}
	if path == "" {
		t.Skip = "not run: set " + ClusterEnv + " to the kubeconfig of a cluster the battery may create namespaces in (make k8s-test probes it against a real API server built from source)"
		h.Skip = t.Skip
		return []substrates.ProbeTarget{t, h}, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", ClusterEnv, path, err)
	}
	// A subject installs the probe fleet (some 50 objects) per check: client-go's default
	// throttle (5 requests a second) would make that most of the battery's time.
	cfg.QPS, cfg.Burst = 100, 200
	cs, err := kubeclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	t.New = func(ctx context.Context) (*substrates.ProbeSubject, error) {
		if env.CompileFleet != nil {
			return probeFleetSubject(ctx, cfg, cs, path, env)
		}
		return probeSubject(ctx, cs, path, env.Exe, false)
	}
	h.New = func(ctx context.Context) (*substrates.ProbeSubject, error) {
		return probeSubject(ctx, cs, path, env.Exe, true)
	}
	return []substrates.ProbeTarget{t, h}, nil
}

// probeFleetSubject installs the whole probe fleet as compile makes it in a fresh namespace
// (installProbeFleet) and opens its runner, with the hooks of the checks that call the runner
// from inside a session.
func probeFleetSubject(ctx context.Context, cfg *rest.Config, cs *kubeclient.Client, kubeconfig string, env substrates.ProbeEnv) (*substrates.ProbeSubject, error) {
	ns, err := probeNamespace(ctx, cs)
	if err != nil {
		return nil, err
	}
	global, err := installProbeFleet(ctx, cfg, env, ns)
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if global != nil {
			global(ctx)
		}
		_ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	}
	if err != nil {
		drop()
		return nil, err
	}
	r, err := OpenRunner(ctx, cs, ns, "")
	if err != nil {
		drop()
		return nil, err
	}
	s := &substrates.ProbeSubject{Runner: r, Actor: "probe", MaxConcurrent: probeMax, Close: drop, NotProbed: notProbedPrelaunch,
		MergeNotProbed: notProbedMerge, Seen: podSeen(cs, ns), SeenFrom: seenFrom, TickAt: cronTick(cs, r, ns), TickFrom: tickFrom,
		// The Job controller fails overtime's Job at its activeDeadlineSeconds.
		Timeout: probeOvertime, TimeoutWait: overtimeWait}
	withSessions(s, cfg, cs, ns)
	if env.Exe != "" {
		s.GetFresh = processGet(env.Exe, kubeconfig, ns)
		// The result and isolation checks' actors run: the probe plays their kubelet.
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		var w workspaces
		go func() {
			defer close(done)
			kubelet(ctx, cs, ns, env.Exe, []string{probeResulter, probeIsolated}, w.seen)
		}()
		s.Result, s.RunsBy = probeResulter, runsBy+"; "+workspaceFrom
		s.Isolated, s.Workspace = probeIsolated, w.workspace(r)
		s.Close = func() { stop(); <-done; drop() }
	}
	return s, nil
}

// probeResulter is the probe fleet's actor with a result schema (conformance/probe).
const probeResulter = "resulter"

// notProbed is why the checks that watch a session's process are not probed on this runner.
const notProbed = "a session's container is not observable through the Runner contract: the cluster runs it (its timeout is the Job's activeDeadlineSeconds, its params its env, both set by the contract's SessionJob)"

// probeNamespace creates a fresh namespace for a subject.
func probeNamespace(ctx context.Context, cs *kubeclient.Client) (string, error) {
	var raw [4]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	ns := "autonomy-probe-" + hex.EncodeToString(raw[:])
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return ns, nil
}

// probeSubject installs the probe actor and the asker (a person) in a fresh namespace and opens
// its runner; human makes the asker the subject's actor.
func probeSubject(ctx context.Context, cs *kubeclient.Client, kubeconfig, exe string, human bool) (*substrates.ProbeSubject, error) {
	ns, err := probeNamespace(ctx, cs)
	if err != nil {
		return nil, err
	}
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	}
	// The asker declares the params the battery launches it with, as conformance/probe's does: a
	// person's launch takes only declared params.
	asker := map[string]any{"actor": "asker", "kind": "human", "triggers": []map[string]any{{"kind": "dispatch", "params": []map[string]string{
		{"name": "PROBE_REF", "source": "subject.ref"}, {"name": "PROBE_TEXT", "source": "subject.text"}}}}}
	fleet, _ := json.Marshal(map[string]any{"namespace": ns, "maxConcurrent": probeMax, "actors": []map[string]any{{"actor": "probe", "kind": "agent"}, asker}})
	objs := []func() error{
		func() error {
			_, err := cs.CoreV1().PodTemplates(ns).Create(ctx, HeldPodTemplate(ns, "probe"), metav1.CreateOptions{})
			return err
		},
		func() error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapFleet, Namespace: ns, Labels: FleetLabels(ns)}, Data: map[string]string{FleetConfigKey: string(fleet)}}
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range objs {
		if err := create(); err != nil {
			drop()
			return nil, fmt.Errorf("installing the probe actor in namespace %s: %w", ns, err)
		}
	}
	r, err := OpenRunner(ctx, cs, ns, "")
	if err != nil {
		drop()
		return nil, err
	}
	s := &substrates.ProbeSubject{Runner: r, Actor: "probe", MaxConcurrent: probeMax, Close: drop, NotProbed: notProbed}
	if human {
		s.Actor, s.Human, s.MaxConcurrent = "asker", true, 0
		s.NotProbed = "no human simulator on the Kubernetes runner: a person resolves an ask with its token (autonomy runner --target kubernetes update)"
	}
	if exe != "" {
		s.GetFresh = processGet(exe, kubeconfig, ns)
	}
	return s, nil
}

// HeldPodTemplate is a probe actor's PodTemplate as compile installs it (contract.go), its pods
// held pending (heldSelector).
func HeldPodTemplate(ns, actor string) *corev1.PodTemplate {
	return sessionPodTemplate(ns, actor, heldSelector)
}

// sessionPodTemplate is an actor's PodTemplate as compile installs it (contract.go): labelled,
// annotated with the actor's name, one session container running SessionArgs, scheduled by
// nodeSelector (nil: anywhere).
func sessionPodTemplate(ns, actor string, nodeSelector map[string]string) *corev1.PodTemplate {
	meta := metav1.ObjectMeta{Name: ObjectName(actor), Namespace: ns, Labels: ActorLabels(ns, actor), Annotations: map[string]string{AnnotationActor: actor}}
	return &corev1.PodTemplate{ObjectMeta: meta, Template: corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: ActorLabels(ns, actor)},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			NodeSelector:  nodeSelector,
			Containers:    []corev1.Container{{Name: ContainerName, Image: DefaultImage, Args: SessionArgs, Env: SessionEnv(actor)}},
		},
	}}
}

// processGet reads a session back through another autonomy process: `autonomy runner --target
// kubernetes get ID --format json`, which knows only the cluster.
func processGet(exe, kubeconfig, ns string) substrates.ProbeGetter {
	return func(ctx context.Context, id string) (ir.Session, bool, error) {
		cmd := exec.CommandContext(ctx, exe, "runner", "--target", Name, "--kubeconfig", kubeconfig, "--namespace", ns, "get", id, "--format", "json")
		for _, kv := range os.Environ() {
			if k, _, _ := strings.Cut(kv, "="); k != EnvSession && k != EnvActor && k != substrates.TargetEnv {
				cmd.Env = append(cmd.Env, kv) // the operator's environment, not a session's
			}
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		data, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && strings.Contains(stderr.String(), "no session") {
			return ir.Session{}, false, nil
		}
		if err != nil {
			return ir.Session{}, false, fmt.Errorf("autonomy runner get %s (another process): %v: %s", id, err, strings.TrimSpace(stderr.String()))
		}
		var s ir.Session
		if err := json.Unmarshal(data, &s); err != nil {
			return ir.Session{}, false, fmt.Errorf("autonomy runner get %s (another process) printed no session: %v", id, err)
		}
		return s, true, nil
	}
}
