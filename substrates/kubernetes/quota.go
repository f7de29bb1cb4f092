package kubernetes

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/autonomyhq/autonomy/ir"
)

// QuotaName is the fleet's ResourceQuota: it bounds the Jobs of the namespace.
const QuotaName = "autonomy-sessions"

// FinishedJobTTL is how long a session's Job (and its pod, which holds the result) outlives the
// session's end: its ttlSecondsAfterFinished. The Job counts toward the quota until then.
const FinishedJobTTL = 300

// quotaJobs is the fleet's bound on Jobs: maxConcurrent sessions and one per cron trigger in
// flight (each CronJob is concurrencyPolicy Forbid), and as many again ended within
// FinishedJobTTL. A finished Job counts toward an object-count quota until it is deleted, so
// without room for them a fleet would stop after its first maxConcurrent sessions; with it, a
// session that creates Jobs through the API without claiming a slot reaches at most twice the
// fleet's capacity, and 0 without a maxConcurrent (no quota: nothing to bound).
func (c *compiler) quotaJobs() int {
	capacity := c.p.Policy.MaxConcurrent.Value
	if capacity <= 0 {
		return 0
	}
	crons := 0
	for _, a := range c.p.Actors {
		for _, t := range a.Triggers {
			if t.Kind == ir.Cron {
				crons++
			}
		}
	}
	return 2 * (capacity + crons)
}

// quota is the ResourceQuota holding count/jobs.batch at quotaJobs, nil when there is no cap.
func (c *compiler) quota() *corev1.ResourceQuota {
	n := c.quotaJobs()
	if n == 0 {
		return nil
	}
	return &corev1.ResourceQuota{TypeMeta: typeMeta("v1", "ResourceQuota"), ObjectMeta: c.meta(QuotaName, FleetLabels(c.box.Namespace)),
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/jobs.batch": *resource.NewQuantity(int64(n), resource.DecimalSI)}}}
}
