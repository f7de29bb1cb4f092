package kubernetes

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/autonomyhq/autonomy/internal/k8stest"
)

// installProfile installs profile (fleetProfile with changes) into namespace ns with installFleet
// and waits for its quota's usage.
func installProfile(t *testing.T, c *k8stest.Cluster, ns, profile string) *kubernetes.Clientset {
	t.Helper()
	installFleet(t, c.Config, ns, profile)
	admin := kubernetes.NewForConfigOrDie(c.Config)
	waitQuota(t, admin, ns)
	return admin
}

// TestQuotaBoundsRunningPods: the fleet's ResourceQuota holds the pods of the namespace at
// maxConcurrent plus its cron triggers plus the model proxy's pod (fleetProfile: 2, 1 and 1, so
// 4). Its sessions' node selector matches no node, so no pod ever ends. Once the proxy's pod
// exists, boss, who may create Jobs, creates 6 directly through the API without claiming a slot:
// the API server admits every Job, but only 3 of them get a pod; the Job controller's pod
// creation for each of the other 3 is refused by the quota.
func TestQuotaBoundsRunningPods(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("quota")
	admin := installProfile(t, c, ns, strings.Replace(fleetProfile, "nodeSelector: { kubernetes.io/arch: amd64 }", "nodeSelector: { autonomy.dev/test: nowhere }", 1))
	ctx := context.Background()
	Eventually(t, 60*time.Second, "the model proxy's pod counts in the quota", func() (bool, error) {
		q, err := admin.CoreV1().ResourceQuotas(ns).Get(ctx, QuotaName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		n := q.Status.Used[corev1.ResourcePods]
		return n.Value() == ModelProxyReplicas, nil
	})
	jobs := as(c.Config, ns, "boss").BatchV1().Jobs(ns)
	for i := range 6 {
		if _, err := jobs.Create(ctx, sessionJobBy(t, admin, ns, "boss", "worker_1", fmt.Sprintf("s-%016x", i)), metav1.CreateOptions{}); err != nil {
			t.Fatalf("Job %d: %v", i+1, err)
		}
	}
	refused := map[string]bool{}
	// The Job controller records each refusal as an event; on a busy control plane (the package's
	// tests run at once, each installing a fleet and its admission policies) that took over a
	// minute once.
	Eventually(t, 180*time.Second, "3 Jobs refused a pod by the quota", func() (bool, error) {
		ev, err := admin.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{"involvedObject.kind": "Job", "reason": "FailedCreate"}.String()})
		if err != nil {
			return false, err
		}
		for _, e := range ev.Items {
			if strings.Contains(e.Message, "exceeded quota: "+QuotaName) {
				refused[e.InvolvedObject.Name] = true
			}
		}
		return len(refused) >= 3, nil
	})
	pods, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.Set{LabelComponent: ComponentSession}.String()})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if refused[p.Labels[batchv1.JobNameLabel]] {
			t.Errorf("Job %s has pod %s and was refused one", p.Labels[batchv1.JobNameLabel], p.Name)
		}
	}
	if len(pods.Items) != 3 || len(refused) != 3 {
		t.Errorf("%d session pods and %d Jobs refused a pod; want 3 and 3 (a quota of 4, one the proxy's)", len(pods.Items), len(refused))
	}
}

// TestFinishedSessionsFreeTheirRoom: a fleet is not throttled by sessions that ended: boss runs
// 8 sessions one after the other (twice the quota of 4, and past the 6 Jobs the former Job-count
// quota allowed), each runs to Succeeded through kwok and frees its room at once, and every
// finished Job is still there for get to read, kept a day (keepFinished's default).
func TestFinishedSessionsFreeTheirRoom(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("quota-free")
	admin := installProfile(t, c, ns, fleetProfile)
	ctx := context.Background()
	jobs := as(c.Config, ns, "boss").BatchV1().Jobs(ns)
	for i := range 8 {
		id := fmt.Sprintf("s-%016x", i)
		if _, err := jobs.Create(ctx, sessionJobBy(t, admin, ns, "boss", "worker_1", id), metav1.CreateOptions{}); err != nil {
			t.Fatalf("session %d: %v", i+1, err)
		}
		sessionPod(t, admin, ns, id)
	}
	list, err := admin.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.Set{LabelComponent: ComponentSession}.String()})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 8 {
		t.Errorf("%d session Jobs after 8 ended; want all 8 kept", len(list.Items))
	}
	for _, j := range list.Items {
		if ttl := j.Spec.TTLSecondsAfterFinished; ttl == nil || *ttl != int32(DefaultKeepFinished/time.Second) {
			t.Errorf("Job %s: ttlSecondsAfterFinished %v, want %d", j.Name, ttl, int32(DefaultKeepFinished/time.Second))
		}
	}
}

// waitQuota waits until the quota controller has computed the usage of the fleet's quota (until
// then, the API server admits nothing it counts).
func waitQuota(t *testing.T, cs *kubernetes.Clientset, ns string) {
	t.Helper()
	Eventually(t, 60*time.Second, "the quota controller computes "+QuotaName, func() (bool, error) {
		q, err := cs.CoreV1().ResourceQuotas(ns).Get(context.Background(), QuotaName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, ok := q.Status.Used["count/jobs.batch"]
		return ok, nil
	})
}

// TestKeepFinishedIsPinned: the admission policy pins a launched Job's ttlSecondsAfterFinished to
// keepFinished: in a fleet with keepFinished: forever, boss's Job built from the template (no
// TTL) is admitted, and one that asks the Job controller to delete it after a minute is refused.
func TestKeepFinishedIsPinned(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("keep")
	admin := installProfile(t, c, ns, strings.Replace(fleetProfile, "      timeZone: Europe/Paris\n", "      timeZone: Europe/Paris\n      keepFinished: forever\n", 1))
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	jobs := as(c.Config, ns, "boss").BatchV1().Jobs(ns)
	short := sessionJobBy(t, admin, ns, "boss", "worker_1", "s-short")
	if short.Spec.TTLSecondsAfterFinished != nil {
		t.Fatalf("keepFinished: forever, yet the Job's ttlSecondsAfterFinished is %d", *short.Spec.TTLSecondsAfterFinished)
	}
	minute := int32(60)
	short.Spec.TTLSecondsAfterFinished = &minute
	// The policy takes effect a moment after it is created: wait until it refuses.
	Eventually(t, 60*time.Second, "the policy refuses a Job deleted a minute after it ends", func() (bool, error) {
		_, err := jobs.Create(context.Background(), short, dry)
		return err != nil && strings.Contains(err.Error(), "template"), nil
	})
	if _, err := jobs.Create(context.Background(), sessionJobBy(t, admin, ns, "boss", "worker_1", "s-kept"), dry); err != nil {
		t.Errorf("a Job kept until deleted, as keepFinished: forever says: %v", err)
	}
}
