// Package k8stest gives tests a real Kubernetes control plane: etcd, kube-apiserver (RBAC,
// admission policies), kube-controller-manager, kube-scheduler and kwok faking a kubelet, built
// from source by scripts/k8s/build.sh and started here on loopback with free ports and a fresh
// PKI, then stopped by PID. No pod's command runs: kwok moves pods to Running and Succeeded.
//
// A package's tests call Get, which starts one cluster for the whole test binary; its TestMain
// calls Main, which stops it after the tests. The tests run only under the gate
// (AUTONOMY_K8S=1, which `make k8s-test` and .ci/run set); there a missing binary fails the test
// with the command that builds it. Without the gate they skip, so `go test ./...` on a fresh
// machine stays fast.
package k8stest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/autonomyhq/autonomy/internal/proc"
)

// The environment the harness reads.
const (
	// GateEnv set to 1 runs the tests that need a cluster.
	GateEnv = "AUTONOMY_K8S"
	// BinEnv names the directory holding the binaries (else CacheDir's build).
	BinEnv = "AUTONOMY_K8S_BIN"
	// CacheEnv names the cache scripts/k8s/build.sh builds into (default ~/.cache/autonomy/k8s).
	CacheEnv = "AUTONOMY_K8S_CACHE"
)

// The versions scripts/k8s/build.sh builds.
const (
	Version     = "v1.37.2"
	KwokVersion = "v0.8.0"
	// BuildCommand builds the binaries into the cache.
	BuildCommand = "scripts/k8s/build.sh"
	// NodeName is the fake node kwok manages.
	NodeName = "kwok-node-0"
)

// binaries are what a cluster runs, each in BinDir.
var binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "kwok-stages.yaml"}

// BinDir is where the binaries are: $AUTONOMY_K8S_BIN, or the build cache keyed on the versions.
func BinDir() string {
	if d := os.Getenv(BinEnv); d != "" {
		return d
	}
	cache := os.Getenv(CacheEnv)
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "autonomy", "k8s")
	}
	return filepath.Join(cache, Version+"-kwok-"+KwokVersion)
}

// Cluster is a running control plane.
type Cluster struct {
	// Config is an admin's: it may do anything (system:masters).
	Config *rest.Config
	// Kubeconfig is a kubeconfig file for Config, for kubectl.
	Kubeconfig string
	// Dir holds the PKI, the state and each process's log (logs/NAME.log); Stop removes it.
	Dir string
	// PodLog is the file kwok serves, following it, as the log of every container of every
	// pod: a test appends lines to it in the CRI format
	// ("2026-01-01T00:00:00.000000000Z stdout F message").
	PodLog string
	procs  []*process
}

type process struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
}

// Pids are the process ids of the cluster's processes, in start order.
func (c *Cluster) Pids() []int {
	out := make([]int, len(c.procs))
	for i, p := range c.procs {
		out[i] = p.cmd.Process.Pid
	}
	return out
}

// Start starts a control plane from the binaries in bin. On an error nothing it started is left.
func Start(ctx context.Context, bin string) (*Cluster, error) {
	var missing []string
	for _, b := range binaries {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no %s in %s: build them with %s (make k8s-test does), or set %s to where they are", strings.Join(missing, ", "), bin, BuildCommand, BinEnv)
	}
	var err error
	for attempt := 0; attempt < 3; attempt++ { // a free port another test took first
		var c *Cluster
		if c, err = start(ctx, bin); err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, err
}

func start(ctx context.Context, bin string) (_ *Cluster, err error) {
	dir, err := os.MkdirTemp("", "autonomy-k8s-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o700); err != nil {
		return nil, err
	}
	pk, err := newPKI(dir)
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	c.Config = &rest.Config{Host: "https://127.0.0.1:" + strconv.Itoa(ports[2]), BearerToken: pk.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: pk.caPEM}, QPS: 200, Burst: 400}
	c.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(c.Kubeconfig, kubeconfig(c.Config.Host, pk), 0o600); err != nil {
		return nil, err
	}
	if err := c.run(bin, "etcd", "--data-dir", filepath.Join(dir, "etcd"), "--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", "http://127.0.0.1:"+strconv.Itoa(ports[1]), "--log-level", "warn", "--unsafe-no-fsync"); err != nil {
		return nil, err
	}
	if err := c.run(bin, "kube-apiserver", "--etcd-servers", etcdURL, "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--endpoint-reconciler-type", "none", "--secure-port", strconv.Itoa(ports[2]),
		"--tls-cert-file", pk.path("apiserver.crt"), "--tls-private-key-file", pk.path("apiserver.key"), "--client-ca-file", pk.path("ca.crt"),
		"--token-auth-file", pk.path("tokens.csv"), "--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc", "--service-account-key-file", pk.path("sa.pub"),
		"--service-account-signing-key-file", pk.path("sa.key"), "--service-cluster-ip-range", "10.0.0.0/24",
		"--cert-dir", filepath.Join(dir, "pki", "generated"), "--v", "1",
		// The fake node's Hostname resolves nowhere: reach its kubelet (kwok) by its InternalIP.
		"--kubelet-preferred-address-types", "InternalIP"); err != nil {
		return nil, err
	}
	if err := c.ready(ctx); err != nil {
		return nil, err
	}
	if err := c.controllers(bin, pk, ports[3]); err != nil {
		return nil, err
	}
	return c, c.registerNode(ctx, ports[3])
}

// controllers starts the controller manager, the scheduler and kwok.
func (c *Cluster) controllers(bin string, pk *pki, kwokPort int) error {
	kc := c.Kubeconfig
	if err := c.run(bin, "kube-controller-manager", "--kubeconfig", kc, "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
		"--bind-address", "127.0.0.1", "--secure-port", "0", "--leader-elect=false",
		"--service-account-private-key-file", pk.path("sa.key"), "--root-ca-file", pk.path("ca.crt"),
		"--use-service-account-credentials=false", "--controllers", "*", "--v", "1",
		// The quota controller counts a new quota's usage from its informers' caches: a pod
		// created as the quota is (an install applies both) can be missing from that count,
		// which only its full resync corrects (every 5 minutes by default, past a test's wait;
		// seen on a loaded 2-core machine). Admission counts every pod made after the count.
		"--resource-quota-sync-period", "10s"); err != nil {
		return err
	}
	if err := c.run(bin, "kube-scheduler", "--kubeconfig", kc, "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
		"--bind-address", "127.0.0.1", "--secure-port", "0", "--leader-elect=false", "--v", "1"); err != nil {
		return err
	}
	logs, err := c.podLogs()
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(kwokPort)
	return c.run(bin, "kwok", "--kubeconfig", kc, "--config", filepath.Join(bin, "kwok-stages.yaml"), "--config", logs,
		"--manage-all-nodes=true", "--node-ip", "127.0.0.1", "--node-port", strconv.Itoa(kwokPort), "--server-address", addr,
		"--tls-cert-file", pk.path("apiserver.crt"), "--tls-private-key-file", pk.path("apiserver.key"))
}

// podLogs writes kwok's logs config, a ClusterLogs that serves c.PodLog (created empty) as the
// log of every pod, following it, and returns its path.
func (c *Cluster) podLogs() (string, error) {
	c.PodLog = filepath.Join(c.Dir, "pod.log")
	if err := os.WriteFile(c.PodLog, nil, 0o644); err != nil {
		return "", err
	}
	path := filepath.Join(c.Dir, "kwok-logs.yaml")
	cfg := "kind: ClusterLogs\napiVersion: kwok.x-k8s.io/v1alpha1\nmetadata:\n  name: autonomy-pod-log\nspec:\n  logs:\n  - logsFile: " +
		strconv.Quote(c.PodLog) + "\n    follow: true\n"
	return path, os.WriteFile(path, []byte(cfg), 0o644)
}

// run starts bin/name in a process group of its own, its output in logs/name.log.
func (c *Cluster) run(bin, name string, args ...string) error {
	log, err := os.Create(filepath.Join(c.Dir, "logs", name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = log, log, c.Dir
	cmd.SysProcAttr = proc.SysProcAttr()
	if cmd.SysProcAttr != nil {
		cmd.SysProcAttr = dieWithParent(cmd.SysProcAttr)
	}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting %s: %v", name, err)
	}
	c.procs = append(c.procs, &process{name: name, cmd: cmd, log: log})
	return nil
}

// ready waits until the API server answers /readyz, failing as soon as it or etcd exits.
func (c *Cluster) ready(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	for {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && string(body) == "ok" {
			return nil
		}
		for _, p := range c.procs {
			if !alive(p.cmd.Process.Pid) {
				return fmt.Errorf("%s exited while the API server started: %s", p.name, c.tail(p.name))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the API server is not ready after 90 s (%v): %s", err, c.tail("kube-apiserver"))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// registerNode creates the fake node kwok plays the kubelet of, with its addresses and kubelet
// endpoint in its status from the start (a Create drops the status): kwok's node-initialize
// stage only adds the addresses a node lacks, and until it has run, the API server cannot reach
// the fake kubelet (pods/log answers "no preferred addresses found").
func (c *Cluster) registerNode(ctx context.Context, kwokPort int) error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	// ephemeral-storage too, as a kubelet reports its root file system: the scheduler places no
	// pod that requests it on a node without it.
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti")}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: NodeName, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
		Labels: map[string]string{"kubernetes.io/hostname": NodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"}},
		Status: corev1.NodeStatus{Allocatable: capacity, Capacity: capacity,
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: NodeName}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(kwokPort)}}}}
	created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	created.Status = node.Status
	_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		// kwok wrote the status first, the addresses it adds with it
		return nil
	}
	return err
}

// tail is the end of a process's log.
func (c *Cluster) tail(name string) string {
	data, _ := os.ReadFile(filepath.Join(c.Dir, "logs", name+".log"))
	if len(data) > 2000 {
		data = data[len(data)-2000:]
	}
	return strings.TrimSpace(string(data))
}

// Stop stops every process the cluster started, by PID, the API server before etcd (its shutdown
// hangs on a gone etcd), and removes Dir.
func (c *Cluster) Stop() error {
	var errs []error
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		pid := p.cmd.Process.Pid
		if err := proc.Terminate(pid, 10*time.Second); err != nil {
			errs = append(errs, fmt.Errorf("stopping %s (%d): %v", p.name, pid, err))
		}
		_ = p.cmd.Wait()
		p.log.Close()
	}
	c.procs = nil
	if c.Dir != "" {
		errs = append(errs, os.RemoveAll(c.Dir))
	}
	return errors.Join(errs...)
}

// freePorts are n loopback ports nothing listened on a moment ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	out := make([]int, n)
	for i := range out {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out[i] = l.Addr().(*net.TCPAddr).Port
	}
	return out, nil
}

func kubeconfig(host string, pk *pki) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: k8stest
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: k8stest
  context: {cluster: k8stest, user: admin}
current-context: k8stest
`, host, pk.path("ca.crt"), pk.token)
}

// shared is the test binary's cluster.
var shared struct {
	main bool
	once sync.Once
	c    *Cluster
	err  error
}

// Main runs a package's tests and then stops the cluster Get started: call it from TestMain.
func Main(m *testing.M) {
	shared.main = true
	code := m.Run()
	if shared.c != nil {
		if err := shared.c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "k8stest:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Get returns the test binary's cluster, starting it on first use. Without AUTONOMY_K8S=1 the
// test is skipped; with it, a missing binary or a failed start fails the test.
func Get(t testing.TB) *Cluster {
	t.Helper()
	if os.Getenv(GateEnv) != "1" {
		t.Skipf("needs a Kubernetes control plane: run make k8s-test (it sets %s=1)", GateEnv)
	}
	if !shared.main {
		t.Fatal("k8stest.Get needs k8stest.Main(m) in the package's TestMain, which stops the cluster")
	}
	shared.once.Do(func() { shared.c, shared.err = Start(context.Background(), BinDir()) })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.c
}
