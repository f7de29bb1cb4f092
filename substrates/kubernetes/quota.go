package kubernetes

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/autonomyhq/autonomy/ir"
)

// QuotaName is the fleet's ResourceQuota: it bounds the pods that run in the namespace.
const QuotaName = "autonomy-sessions"

// ModelProxyReplicas is the model proxy Deployment's replica count. Its rollout strategy is
// Recreate, so it never has more pods than that, and the quota leaves room for exactly them.
const ModelProxyReplicas = 1

// quotaPods is the fleet's bound on pods: maxConcurrent sessions, one per cron trigger in flight
// (each CronJob is concurrencyPolicy Forbid), and the model proxy's pods when the fleet runs one;
// 0 without a maxConcurrent (no quota: nothing to bound). A ResourceQuota's `pods` counts only
// the pods in a non-terminal phase (not Succeeded or Failed), so a session that ends frees its
// room at once, while its Job and pod (its record and result) stay until the finished-Job TTL.
func (c *compiler) quotaPods() int {
	capacity := c.p.Policy.MaxConcurrent.Value
	if capacity <= 0 {
		return 0
	}
	n := capacity
	for _, a := range c.p.Actors {
		for _, t := range a.Triggers {
			if t.Kind == ir.Cron {
				n++
			}
		}
	}
	if c.skills() {
		n += ModelProxyReplicas
	}
	return n
}

// quota is the ResourceQuota holding pods at quotaPods, nil when there is no cap. A Job created
// past it exists, but the Job controller's pod creation is refused until a pod ends.
func (c *compiler) quota() *corev1.ResourceQuota {
	n := c.quotaPods()
	if n == 0 {
		return nil
	}
	return &corev1.ResourceQuota{TypeMeta: typeMeta("v1", "ResourceQuota"), ObjectMeta: c.meta(QuotaName, FleetLabels(c.box.Namespace)),
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(int64(n), resource.DecimalSI)}}}
}
