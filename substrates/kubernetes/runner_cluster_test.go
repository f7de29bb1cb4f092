package kubernetes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/autonomyhq/autonomy/internal/k8stest"
	"github.com/autonomyhq/autonomy/internal/kubeclient"
	"github.com/autonomyhq/autonomy/substrates"
)

// ClusterClient is an admin's client of the test cluster and its kubeconfig: the control plane
// k8stest starts (under AUTONOMY_K8S=1, as make k8s-test sets; skipped otherwise), or the one
// $AUTONOMY_K8S_KUBECONFIG names (a cluster started by hand). It sets $AUTONOMY_K8S_KUBECONFIG
// for the test, which the conformance targets and launcher processes read.
func ClusterClient(t testing.TB) (kubernetes.Interface, string) {
	t.Helper()
	cfg, path := clusterConfig(t)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, path
}

// RunnerClient is the runner's client (kubeclient) of the cluster ClusterClient connects to, as
// the admin: the tests set up with client-go's clientset, which autonomy does not link.
func RunnerClient(t testing.TB) *kubeclient.Client {
	t.Helper()
	cfg, _ := clusterConfig(t)
	return runnerClient(t, cfg)
}

// runnerClient is the runner's client for cfg.
func runnerClient(t testing.TB, cfg *rest.Config) *kubeclient.Client {
	t.Helper()
	c, err := kubeclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// clusterConfig is the admin's config of the test cluster, and its kubeconfig.
func clusterConfig(t testing.TB) (*rest.Config, string) {
	t.Helper()
	path := os.Getenv(ClusterEnv)
	if path == "" {
		path = k8stest.Get(t).Kubeconfig
	}
	if tt, ok := t.(*testing.T); ok {
		tt.Setenv(ClusterEnv, path)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	return cfg, path
}

// ClusterNamespace creates a fresh namespace, deleted when the test ends.
func ClusterNamespace(t testing.TB, cs kubernetes.Interface) string {
	t.Helper()
	var raw [4]byte
	rand.Read(raw[:])
	ns := "rt-" + hex.EncodeToString(raw[:])
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", ns, err)
		}
	})
	return ns
}

// Held is a node selector no node has: a session whose pod carries it stays pending, its Job
// active, until it is cancelled. It stands for an agent that works until it is stopped, as the
// battery's probe actor does (kwok completes every scheduled Job pod at once).
var Held = heldSelector

// ProbeTargets are the runner's conformance targets.
var ProbeTargets = probeTargets

// SessionPodTemplate is an actor's PodTemplate as compile installs it; nodeSelector holds its
// pods (Held) or is nil.
var SessionPodTemplate = sessionPodTemplate

// InstallTemplates creates the PodTemplates in their namespace.
func InstallTemplates(t testing.TB, cs kubernetes.Interface, pts ...*corev1.PodTemplate) {
	t.Helper()
	for _, pt := range pts {
		if _, err := cs.CoreV1().PodTemplates(pt.Namespace).Create(context.Background(), pt, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// Eventually polls cond every 100 ms until it holds, failing the test after wait.
func Eventually(t testing.TB, wait time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s", what, wait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SubjectNamespace is the namespace a probe subject of the Kubernetes runner is installed in.
func SubjectNamespace(s *substrates.ProbeSubject) string { return s.Runner.(*Runner).opts.Namespace }

// DropSessionAdmission deletes the binding of ns's Job admission policy and waits until the API
// server admits (dry run) a Job of probe, created by launcher's ServiceAccount, setting
// PROBE_ROLE to OWNER: a realization broken for a test.
func DropSessionAdmission(ctx context.Context, kubeconfig, ns string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, name := range []string{AdmissionPolicyName(ns), LaunchPolicyName(ns, ObjectName("probe"))} {
		if err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return err
		}
	}
	pt, err := admin.CoreV1().PodTemplates(ns).Get(ctx, ObjectName("probe"), metav1.GetOptions{})
	if err != nil {
		return err
	}
	job := SessionJob(ns, JobTemplate(pt), Session{ID: "s-dropped", Params: map[string]string{"PROBE_ROLE": "OWNER"}})
	launcher := as(cfg, ns, ObjectName("launcher"))
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := launcher.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}
