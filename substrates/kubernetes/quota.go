package kubernetes

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/autonomyhq/autonomy/ir"
)

// QuotaName is the fleet's ResourceQuota: it bounds the pods that run in the namespace, and the
// Jobs and ConfigMaps it holds.
const QuotaName = "autonomy-sessions"

// ModelProxyReplicas is the model proxy Deployment's replica count. Its rollout strategy is
// Recreate, so it never has more pods than that, and the quota leaves room for exactly them.
const ModelProxyReplicas = 1

// The quota's object counts (documented in docs/kubernetes.md, "The quota"). A launcher's token
// may create Jobs and, when its scope reaches a person, asks (ConfigMaps): without a count, a
// session that calls the API itself could create them until etcd is full.
const (
	// DefaultJobsPerSlot is the default maxJobs per session the fleet may run at once (its
	// maxConcurrent, or without one its number of agents): finished Jobs stay keepFinished (a day
	// by default), so this is the room for a day of sessions some minutes long; past it, the
	// operator's launch deletes the oldest finished ones (runner_reclaim.go).
	DefaultJobsPerSlot = 200
	// DefaultAsksPerPerson is the default maxAsks per person of the fleet (none without one): an
	// ask keeps its ConfigMap once it ended, until it is deleted (by hand, or by the operator's
	// ask that finds the count full: runner_reclaim.go).
	DefaultAsksPerPerson = 200
	// cronJobsKept is the room of a cron trigger's CronJob: the Jobs its controller keeps (3
	// succeeded and 1 failed, the history limits' defaults) and its one in flight.
	cronJobsKept = 5
	// configMapsExtra is the room for the ConfigMaps the cluster writes in every namespace
	// (kube-root-ca.crt; a service mesh's root certificate).
	configMapsExtra = 4
	// maxQuotaCount bounds maxJobs and maxAsks.
	maxQuotaCount = 1_000_000
)

// quotaPods is the fleet's bound on pods: maxConcurrent sessions, one per cron trigger in flight
// (each CronJob is concurrencyPolicy Forbid), and the model proxy's pods when the fleet runs one;
// 0 without a maxConcurrent (nothing to bound). A ResourceQuota's `pods` counts only
// the pods in a non-terminal phase (not Succeeded or Failed), so a session that ends frees its
// room at once, while its Job and pod (its record and result) stay until the finished-Job TTL.
func (c *compiler) quotaPods() int {
	capacity := c.p.Policy.MaxConcurrent.Value
	if capacity <= 0 {
		return 0
	}
	n := capacity + c.cronTriggers()
	if c.skills() {
		n += ModelProxyReplicas
	}
	return n
}

// cronTriggers is the number of the fleet's cron triggers.
func (c *compiler) cronTriggers() int {
	n := 0
	for _, a := range c.p.Actors {
		for _, t := range a.Triggers {
			if t.Kind == ir.Cron {
				n++
			}
		}
	}
	return n
}

// maxJobs is the fleet's room for the Jobs its sessions launch: policy.box.kubernetes.maxJobs,
// by default DefaultJobsPerSlot per session it may run at once.
func (c *compiler) maxJobs() int {
	if c.box.MaxJobs > 0 {
		return c.box.MaxJobs
	}
	slots := c.p.Policy.MaxConcurrent.Value
	if slots <= 0 {
		slots = len(c.agents)
	}
	return DefaultJobsPerSlot * max(slots, 1)
}

// maxAsks is the fleet's room for asks: policy.box.kubernetes.maxAsks, by default
// DefaultAsksPerPerson per person (none in a fleet without one).
func (c *compiler) maxAsks() int {
	if c.box.MaxAsks > 0 {
		return c.box.MaxAsks
	}
	return DefaultAsksPerPerson * len(c.humans())
}

// quotaJobs is the quota's count/jobs.batch: maxJobs, and the Jobs each cron trigger's CronJob
// keeps (cronJobsKept).
func (c *compiler) quotaJobs() int { return c.maxJobs() + cronJobsKept*c.cronTriggers() }

// quotaConfigMaps is the quota's count/configmaps: maxAsks, the fleet's own ConfigMaps (the
// installation, the fleet config, the slots) and configMapsExtra.
func (c *compiler) quotaConfigMaps() int {
	n := c.maxAsks() + 2 + configMapsExtra
	if c.p.Policy.MaxConcurrent.Value > 0 {
		n++
	}
	return n
}

// quota is the fleet's ResourceQuota: pods at quotaPods (with a maxConcurrent), Jobs at quotaJobs
// and ConfigMaps at quotaConfigMaps. A Job created past the pods exists, but the Job
// controller's pod creation is refused until a pod ends; a Job or ConfigMap created past its
// count is refused.
func (c *compiler) quota() *corev1.ResourceQuota {
	qty := func(n int) resource.Quantity { return *resource.NewQuantity(int64(n), resource.DecimalSI) }
	hard := corev1.ResourceList{
		"count/jobs.batch": qty(c.quotaJobs()),
		"count/configmaps": qty(c.quotaConfigMaps()),
	}
	if n := c.quotaPods(); n > 0 {
		hard[corev1.ResourcePods] = qty(n)
	}
	return &corev1.ResourceQuota{TypeMeta: typeMeta("v1", "ResourceQuota"), ObjectMeta: c.meta(QuotaName, FleetLabels(c.box.Namespace)),
		Spec: corev1.ResourceQuotaSpec{Hard: hard}}
}
