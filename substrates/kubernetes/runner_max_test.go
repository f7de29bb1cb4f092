package kubernetes

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/autonomyhq/autonomy/internal/kubeclient"
	"github.com/autonomyhq/autonomy/ir"
)

// launchHelperEnv makes the test binary a launcher process of TestMaxConcurrentHoldsAcrossProcesses:
// "NAMESPACE MAX LAUNCHES".
const launchHelperEnv = "AUTONOMY_K8S_LAUNCH_HELPER"

// TestLaunchHelperProcess is a launcher process: it launches concurrently, printing one line per
// launch: "ok ID", "refused MESSAGE" or "error MESSAGE".
func TestLaunchHelperProcess(t *testing.T) {
	spec := os.Getenv(launchHelperEnv)
	if spec == "" {
		return // not a helper process
	}
	var ns string
	var max, n int
	if _, err := fmt.Sscan(spec, &ns, &max, &n); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(ClusterEnv))
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	cs, err := kubeclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(RunnerOptions{Client: cs, Namespace: ns, Actors: []RunnerActor{{Name: "probe", Params: []string{"N"}}}, MaxConcurrent: max})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := r.Launch(context.Background(), "probe", ir.LaunchParams{"N": strconv.Itoa(i)})
			var refused *RefusedError
			line := "ok " + s.ID
			switch {
			case errors.As(err, &refused):
				line = "refused " + err.Error()
			case err != nil:
				line = "error " + err.Error()
			}
			mu.Lock()
			fmt.Println(line)
			mu.Unlock()
		}()
	}
	wg.Wait()
}

// TestMaxConcurrentHoldsAcrossProcesses: 20 launches at once from 4 processes, with
// maxConcurrent 7: exactly 7 start, the others are refused, and 7 Jobs exist.
func TestMaxConcurrentHoldsAcrossProcesses(t *testing.T) {
	cs, kubeconfig := ClusterClient(t)
	ns := ClusterNamespace(t, cs)
	InstallTemplates(t, cs, HeldPodTemplate(ns, "probe"))
	const max, procs, each = 7, 4, 5
	var outs [procs]bytes.Buffer
	var cmds []*exec.Cmd
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLaunchHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d", launchHelperEnv, ns, max, each), ClusterEnv+"="+kubeconfig)
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("launcher %d: %v\n%s", i, err, outs[i].String())
		}
	}
	started, refused := map[string]bool{}, 0
	for i := range outs {
		sc := bufio.NewScanner(&outs[i])
		for sc.Scan() {
			switch line := sc.Text(); {
			case strings.HasPrefix(line, "ok "):
				started[strings.TrimPrefix(line, "ok ")] = true
			case strings.HasPrefix(line, "refused "):
				refused++
			case strings.HasPrefix(line, "error "):
				t.Errorf("launcher %d: %s", i, line)
			}
		}
	}
	if len(started) != max || refused != procs*each-max {
		t.Errorf("%d launches started and %d were refused; want %d and %d", len(started), refused, max, procs*each-max)
	}
	jobs, err := cs.BatchV1().Jobs(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(jobs.Items) != max {
		t.Errorf("%d Jobs (%v), want %d", len(jobs.Items), err, max)
	}
}
