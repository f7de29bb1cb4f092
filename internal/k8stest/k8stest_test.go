package k8stest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func TestMain(m *testing.M) { Main(m) }

// TestMissingBinariesFailWithTheBuildCommand: a directory without the binaries is an error that
// names them and the command building them, and starts nothing.
func TestMissingBinariesFailWithTheBuildCommand(t *testing.T) {
	_, err := Start(context.Background(), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), BuildCommand) || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Fatalf("got %v", err)
	}
}

// TestStopLeavesNoProcessAndNoDirectory: a cluster of its own, started and stopped: every
// process it started is gone and its directory removed.
func TestStopLeavesNoProcessAndNoDirectory(t *testing.T) {
	Get(t) // the gate, and the binaries
	c, err := Start(context.Background(), BinDir())
	if err != nil {
		t.Fatal(err)
	}
	pids, dir := c.Pids(), c.Dir
	if len(pids) != 5 {
		t.Errorf("%d processes, want etcd, the API server, the controller manager, the scheduler and kwok", len(pids))
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d outlived Stop", pid)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s outlived Stop: %v", dir, err)
	}
}

// TestAJobRunsToSucceeded: the cluster schedules a Job's pod onto kwok's node, which completes
// it, and the Job controller marks the Job complete.
func TestAJobRunsToSucceeded(t *testing.T) {
	c := Get(t)
	cs := kubernetes.NewForConfigOrDie(c.Config)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "k8stest-job-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	backoff := int32(0)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "one"}, Spec: batchv1.JobSpec{BackoffLimit: &backoff,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "example.invalid/none", Args: []string{"true"}}}}}}}
	if _, err := cs.BatchV1().Jobs(ns.Name).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		j, err := cs.BatchV1().Jobs(ns.Name).Get(ctx, "one", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if j.Status.Succeeded == 1 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the Job did not succeed: %+v", j.Status)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestAControlPlaneDiesWithItsTestProcess: a test process killed outright (go test's timeout
// panics; a CI job is cancelled) runs no Stop, and its control plane is not left running: the
// kernel kills each process of it with its parent. (CI16's timed-out run left etcd, the API
// server, the controllers and kwok running for the rest of the session.)
func TestAControlPlaneDiesWithItsTestProcess(t *testing.T) {
	if os.Getenv("K8STEST_ORPHAN_CHILD") == "1" {
		c, err := Start(context.Background(), BinDir())
		if err != nil {
			fmt.Println("ERROR", err)
			return
		}
		fmt.Println("CLUSTER", c.Dir, strings.Trim(fmt.Sprint(c.Pids()), "[]"))
		select {} // until killed
	}
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's parent-death signal is Linux's")
	}
	Get(t) // the gate, and the binaries
	cmd := exec.Command(os.Args[0], "-test.run=^TestAControlPlaneDiesWithItsTestProcess$")
	cmd.Env = append(os.Environ(), "K8STEST_ORPHAN_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	fields := strings.Fields(line)
	if err != nil || len(fields) < 3 || fields[0] != "CLUSTER" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the child started no cluster: %q %v", line, err)
	}
	dir := fields[1]
	defer os.RemoveAll(dir)
	var pids []int
	for _, f := range fields[2:] {
		pid, _ := strconv.Atoi(f)
		pids = append(pids, pid)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no Stop runs
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("process %d outlived its test process", pid)
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	}
}
