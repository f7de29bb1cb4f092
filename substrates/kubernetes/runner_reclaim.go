package kubernetes

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/autonomyhq/autonomy/ir"
)

// A ResourceQuota's count/jobs.batch counts every Job of the namespace, finished ones included
// (no quota scope tells a finished Job from a running one), and a finished session's Job stays
// keepFinished (a day by default). A fleet whose sessions end faster than maxJobs per
// keepFinished would have every launch refused while only finished sessions fill the count. So
// the operator's launch (a runner with no calling actor: the CLI outside a session's pod) that
// the count refuses deletes the reclaimBatch oldest finished sessions' Jobs of the fleet and
// creates its Job again: keepFinished is how long a finished session is kept at most. A
// session's launch never deletes (its token may not), and is refused as before. Asks, whose
// ConfigMaps count in count/configmaps until deleted, are reclaimed alike (reclaimAsks).
const (
	// reclaimBatch is how many finished Jobs a refused launch deletes: room for some launches
	// more, so a fleet at its count does not delete once per launch.
	reclaimBatch = 10
	// reclaimWait bounds how long the launch waits for the quota controller to count the
	// deletes (it recounts on each delete, in well under a second on a healthy cluster).
	reclaimWait = 10 * time.Second
)

// jobCountFull reports whether err is the quota's refusal of a Job past count/jobs.batch.
func jobCountFull(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota") && strings.Contains(err.Error(), "count/jobs.batch")
}

// finishedAt is when Job j ended (its Complete or Failed condition), zero while it runs.
func finishedAt(j *batchv1.Job) time.Time {
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// reclaim deletes the reclaimBatch oldest finished Jobs of the fleet's sessions (each with its
// uid as a precondition, its pod with it), and returns how many it deleted. Only the operator's
// runner reclaims.
func (r *Runner) reclaim(ctx context.Context) int {
	if r.opts.Caller != nil {
		return 0
	}
	all, err := r.jobs(ctx)
	if err != nil {
		return 0
	}
	var ended []batchv1.Job
	for _, j := range all {
		if !finishedAt(&j).IsZero() && j.DeletionTimestamp == nil {
			ended = append(ended, j)
		}
	}
	slices.SortFunc(ended, func(a, b batchv1.Job) int {
		if c := finishedAt(&a).Compare(finishedAt(&b)); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	deleted := 0
	background := metav1.DeletePropagationBackground
	for _, j := range ended[:min(len(ended), reclaimBatch)] {
		uid := j.UID
		err := r.opts.Client.BatchV1().Jobs(r.opts.Namespace).Delete(ctx, j.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			deleted++
		case apierrors.IsForbidden(err):
			return deleted // this identity may not delete Jobs: the refusal stands
		}
	}
	return deleted
}

// createJob creates job; refused by the quota's count of Jobs, the operator's runner reclaims
// finished sessions' Jobs and creates it again once the quota has counted them.
func (r *Runner) createJob(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
	var created *batchv1.Job
	err := r.reclaiming(ctx, jobCountFull, r.reclaim, func() (err error) {
		created, err = r.opts.Client.BatchV1().Jobs(r.opts.Namespace).Create(ctx, job, metav1.CreateOptions{FieldValidation: "Strict"})
		return err
	})
	return created, err
}

// reclaiming calls create; when full says the quota refused it, and reclaim deleted something,
// it calls create again until the quota has counted the deletes (reclaimWait at most).
func (r *Runner) reclaiming(ctx context.Context, full func(error) bool, reclaim func(context.Context) int, create func() error) error {
	err := create()
	if err == nil || !full(err) || reclaim(ctx) == 0 {
		return err
	}
	deadline := time.Now().Add(reclaimWait)
	for {
		if err = create(); err == nil || !full(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// configMapCountFull reports whether err is the quota's refusal of a ConfigMap past
// count/configmaps.
func configMapCountFull(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota") && strings.Contains(err.Error(), "count/configmaps")
}

// reclaimAsks deletes the reclaimBatch oldest ended asks of the fleet (done, failed or
// cancelled: nothing resolves them any more; the one that ended first goes first, by the end
// time its runner recorded, else when it was parked: an answer just given is the last to go,
// its asker may not have read it yet), each with its uid as a
// precondition, and returns how many it deleted. An ended ask, unlike a finished Job, has no
// TTL: without this, a fleet with a person would have its asks refused for good once maxAsks
// of them had ended. Only the operator's runner reclaims.
func (r *Runner) reclaimAsks(ctx context.Context) int {
	if r.opts.Caller != nil {
		return 0
	}
	all, err := r.asks(ctx)
	if err != nil {
		return 0
	}
	var ended []corev1.ConfigMap
	for _, cm := range all {
		if ir.SessionStatus(cm.Data[askStatus]).Ended() && cm.DeletionTimestamp == nil {
			ended = append(ended, cm)
		}
	}
	endedAt := func(cm corev1.ConfigMap) time.Time {
		if t, err := time.Parse(time.RFC3339Nano, cm.Data[askEnded]); err == nil {
			return t
		}
		return cm.CreationTimestamp.Time // ended before its end was recorded
	}
	slices.SortFunc(ended, func(a, b corev1.ConfigMap) int {
		if c := endedAt(a).Compare(endedAt(b)); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	deleted := 0
	for _, cm := range ended[:min(len(ended), reclaimBatch)] {
		uid := cm.UID
		err := r.opts.Client.CoreV1().ConfigMaps(r.opts.Namespace).Delete(ctx, cm.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			deleted++
		case apierrors.IsForbidden(err):
			return deleted
		}
	}
	return deleted
}
