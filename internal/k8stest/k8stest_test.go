package k8stest

import (
	"context"
	"os"
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
