package kubernetes

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/autonomyhq/autonomy/internal/k8stest"
	"github.com/autonomyhq/autonomy/ir"
)

// TestCancelOnlyOfARunningSession: stopper (agent:cancel@worker_1) may cancel worker_1's running
// session, and the admission policy refuses the same cancel of one that has ended (done: kwok
// completes its pod; failed: past its deadline), so an ended session is never rewritten as
// cancelled; it refuses a cancel whose mark is not the time of the cancel (free text shown as
// one), and any delete of a session's Job by a fleet ServiceAccount, even one RBAC lets delete
// Jobs, while the operator's delete is admitted (real requests, dry run).
func TestCancelOnlyOfARunningSession(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("ended")
	install(t, c.Config, ns)
	admin := kubernetes.NewForConfigOrDie(c.Config)
	ctx := context.Background()
	running := sessionJob(t, admin, ns, "worker_1", "s-running")
	yes := true
	running.Spec.Suspend = &yes
	done := sessionJob(t, admin, ns, "worker_1", "s-done")
	failed := sessionJob(t, admin, ns, "worker_1", "s-failed")
	zero, one := int32(0), int64(1)
	failed.Spec.Parallelism, failed.Spec.ActiveDeadlineSeconds = &zero, &one
	for _, j := range []*batchv1.Job{running, done, failed} {
		if _, err := admin.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cancelAs := func(sa, name string, edit func(map[string]any)) error {
		return dryRunCancel(t, c.Config, admin, ns, sa, name, edit)
	}
	waitPolicy(t, func() error {
		return cancelAs("stopper", "s-running", func(p map[string]any) { p["spec"].(map[string]any)["parallelism"] = 1 })
	})
	if err := cancelAs("stopper", "s-running", nil); err != nil {
		t.Fatalf("stopper cannot cancel worker_1's running session: %v", err)
	}
	for name, want := range map[string]ir.SessionStatus{"s-done": ir.Done, "s-failed": ir.Failed} {
		Eventually(t, 60*time.Second, name+" ends", func() (bool, error) {
			j, err := admin.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			st, _ := jobStatus(j)
			return st == want, nil
		})
		if err := cancelAs("stopper", name, nil); err == nil || !strings.Contains(err.Error(), "agent:cancel") {
			t.Errorf("stopper's cancel of the ended %s: %v, want refused by the admission policy", name, err)
		}
	}
	for what, mark := range map[string]string{
		"free text":         "by alice (OWNER) after review approved",
		"a time then text":  "2026-11-26T22:56:17Z by alice",
		"a time not in UTC": "2026-11-26T22:56:17+01:00",
		"no time":           "",
		"not a date":        "2026-13-45T99:61:61Z",
	} {
		err := cancelAs("stopper", "s-running", func(p map[string]any) {
			p["metadata"].(map[string]any)["annotations"] = map[string]any{AnnotationCancelled: mark}
		})
		if err == nil || !strings.Contains(err.Error(), "denied request") {
			t.Errorf("stopper's cancel marked with %s (%q): %v, want refused by the admission policy", what, mark, err)
		}
	}
	// RBAC grants no fleet ServiceAccount delete on Jobs; were it granted (here to stopper and
	// janitor, both agent:cancel@worker_1), the admission policy still refuses.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "delete-jobs", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"delete"}}}}
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "delete-jobs", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "delete-jobs"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "stopper", Namespace: ns}, {Kind: "ServiceAccount", Name: "janitor", Namespace: ns}}}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	background := metav1.DeletePropagationBackground
	del := metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}, PropagationPolicy: &background}
	for _, sa := range []string{"stopper", "janitor"} {
		var err error
		Eventually(t, 30*time.Second, sa+"'s delete reaches admission", func() (bool, error) {
			err = as(c.Config, ns, sa).BatchV1().Jobs(ns).Delete(ctx, "s-running", del)
			return err == nil || !strings.Contains(err.Error(), "cannot delete resource"), nil
		})
		if err == nil || !strings.Contains(err.Error(), "denied request") {
			t.Errorf("%s deleted worker_1's session's Job: %v, want refused by the admission policy", sa, err)
		}
	}
	if err := admin.BatchV1().Jobs(ns).Delete(ctx, "s-running", del); err != nil {
		t.Errorf("the operator cannot delete a session's Job: %v", err)
	}
}

// TestJobStatusEndedBeforeTheCancel: a Job that completed is done though it carries the cancel
// mark, a Job that failed after its cancel was admitted is cancelled, one being deleted after it
// ended (its ttlSecondsAfterFinished) keeps its end, and the cancel's detail is the parsed time
// only, never the mark's text.
func TestJobStatusEndedBeforeTheCancel(t *testing.T) {
	cond := func(typ batchv1.JobConditionType) []batchv1.JobCondition {
		return []batchv1.JobCondition{{Type: typ, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded", Message: "past its deadline"}}
	}
	mark := func(v string) map[string]string { return map[string]string{AnnotationCancelled: v} }
	now := metav1.Now()
	for _, c := range []struct {
		what   string
		job    batchv1.Job
		want   ir.SessionStatus
		detail string
	}{
		{"complete, marked", batchv1.Job{ObjectMeta: metav1.ObjectMeta{Annotations: mark("2026-11-26T22:56:17Z")}, Status: batchv1.JobStatus{Conditions: cond(batchv1.JobComplete)}}, ir.Done, ""},
		{"complete, being deleted", batchv1.Job{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: batchv1.JobStatus{Conditions: cond(batchv1.JobComplete)}}, ir.Done, ""},
		{"failed, being deleted", batchv1.Job{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: batchv1.JobStatus{Conditions: cond(batchv1.JobFailed)}}, ir.Failed, "DeadlineExceeded: past its deadline"},
		{"failed by its cancel", batchv1.Job{ObjectMeta: metav1.ObjectMeta{Annotations: mark("2026-11-26T22:56:17Z")}, Status: batchv1.JobStatus{Conditions: cond(batchv1.JobFailed)}}, ir.Cancelled, "cancelled at 2026-11-26T22:56:17Z"},
		{"marked, running", batchv1.Job{ObjectMeta: metav1.ObjectMeta{Annotations: mark("2026-11-26T22:56:17Z")}}, ir.Cancelled, "cancelled at 2026-11-26T22:56:17Z"},
		{"marked with text", batchv1.Job{ObjectMeta: metav1.ObjectMeta{Annotations: mark("by alice (OWNER) after review approved")}}, ir.Cancelled, "cancelled"},
	} {
		st, detail := jobStatus(&c.job)
		if st != c.want || detail != c.detail {
			t.Errorf("%s: %s %q, want %s %q", c.what, st, detail, c.want, c.detail)
		}
	}
}

// TestCancelRefusedOnceTheJobIsEnding: once the Job controller has decided a session's end
// (FailureTarget, or SuccessCriteriaMet) and waits for its pods to terminate before it says
// Failed or Complete, the admission policy refuses stopper's cancel (which would have the
// failure read as cancelled), and the runner's Cancel reports nothing to cancel without a
// request. The Jobs are managed by another controller (spec.managedBy), so that the status the
// test writes stays as written (real requests, dry run).
func TestCancelRefusedOnceTheJobIsEnding(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("ending")
	install(t, c.Config, ns)
	admin := kubernetes.NewForConfigOrDie(c.Config)
	ctx := context.Background()
	other := "autonomy.dev/test-controller"
	conds := map[string]batchv1.JobConditionType{"s-failing": batchv1.JobFailureTarget, "s-succeeding": batchv1.JobSuccessCriteriaMet, "s-running": ""}
	for name, cond := range conds {
		j := sessionJob(t, admin, ns, "worker_1", name)
		j.Spec.ManagedBy = &other
		j, err := admin.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cond == "" {
			continue
		}
		start := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
		j.Status.StartTime = &start
		j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue, Reason: "Test", Message: "decided", LastTransitionTime: metav1.Now(), LastProbeTime: metav1.Now()}}
		if cond == batchv1.JobSuccessCriteriaMet {
			j.Status.Succeeded = 1
		} else {
			j.Status.Failed = 1
		}
		if _, err := admin.BatchV1().Jobs(ns).UpdateStatus(ctx, j, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("%s: writing %s: %v", name, cond, err)
		}
	}
	cancelEdited := func(name string, edit func(map[string]any)) error {
		return dryRunCancel(t, c.Config, admin, ns, "stopper", name, edit)
	}
	cancel := func(name string) error { return cancelEdited(name, nil) }
	waitPolicy(t, func() error {
		return cancelEdited("s-running", func(p map[string]any) { p["spec"].(map[string]any)["parallelism"] = 1 })
	})
	for name, cond := range conds {
		err := cancel(name)
		if cond == "" {
			if err != nil {
				t.Errorf("stopper cannot cancel the running %s: %v", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "agent:cancel") {
			t.Errorf("stopper's cancel of %s (%s): %v, want refused by the admission policy", name, cond, err)
		}
		j, err := admin.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !ending(j) {
			t.Errorf("%s: ending() is false with %s", name, cond)
		}
	}
}

// dryRunCancel makes, as ServiceAccount sa and in a dry run, the runner's cancel of the Job
// name as it is now (cancelPatch), changed by edit when it is not nil: the admission policy's
// answer is the error. The patch carries the resourceVersion read, so a conflict (the Job
// controller wrote the Job between the read and the patch) reads it again, as Runner.Cancel does.
func dryRunCancel(t *testing.T, cfg *rest.Config, admin kubernetes.Interface, ns, sa, name string, edit func(map[string]any)) error {
	t.Helper()
	ctx := context.Background()
	for tries := 1; ; tries++ {
		j, err := admin.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p := cancelPatch(j.ResourceVersion, time.Now())
		if edit != nil {
			edit(p)
		}
		body, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = as(cfg, ns, sa).BatchV1().Jobs(ns).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		if !apierrors.IsConflict(err) || tries == 50 {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
