package kubernetes

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxConcurrent is held by the API server, not by a lock of one process: the slots ConfigMap
// holds a claim per session in flight (its id, and when it was claimed), and a launch adds its
// own with an update that carries the resourceVersion it read. Two launchers that read the same
// version cannot both write: the second gets a conflict and decides again on what the first
// wrote. A claim counts while its Job has not ended; a claim whose Job does not exist yet counts
// for claimGrace (the launch that made it is still creating it, or died: then it lapses).
const claimGrace = 2 * time.Minute

// claimSkew is how far ahead of this launcher's clock a claim may be dated and still count (the
// launchers' clocks differ a little). The admission policy checks a claim's shape, not its time
// (CEL has no clock), so a claim dated further ahead is a forgery, or a clock far off: it never
// counts, or a session able to write the slots could hold every slot forever with claims dated
// in 2999.
const claimSkew = time.Minute

// claimCounts says whether a claim made at t still holds a slot at now: made no later than
// claimSkew ahead of now, and less than claimGrace ago.
func claimCounts(now, t time.Time) bool {
	age := now.Sub(t)
	return age >= -claimSkew && age < claimGrace
}

// claim takes a slot for session id when the fleet has a cap, and returns the function that
// gives it back (a launch whose Job could not be created).
func (r *Runner) claim(ctx context.Context, id string) (release func(), err error) {
	if r.opts.MaxConcurrent == 0 {
		return func() {}, nil
	}
	for attempt := 0; ; attempt++ {
		done, err := r.tryClaim(ctx, id)
		if done || err != nil {
			return func() { r.unclaim(id) }, err
		}
		// A conflict: another launcher wrote first. Back off a little, at random, so that
		// launchers that collided do not collide again in step.
		wait := time.Duration(5+rand.IntN(20*min(attempt+1, 10))) * time.Millisecond
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("launching: claiming a slot of maxConcurrent %d: %w", r.opts.MaxConcurrent, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// tryClaim makes one attempt; done is false after a conflict.
func (r *Runner) tryClaim(ctx context.Context, id string) (done bool, err error) {
	cms := r.opts.Client.CoreV1().ConfigMaps(r.opts.Namespace)
	cm, err := cms.Get(ctx, SlotsConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: SlotsConfigMap, Namespace: r.opts.Namespace}}
		if cm, err = cms.Create(ctx, cm, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			return false, nil
		}
	}
	if err != nil {
		return false, r.apiError("launching: reading the slots of maxConcurrent (ConfigMap "+SlotsConfigMap+")", "get and update configmaps/"+SlotsConfigMap, err)
	}
	// The Jobs are listed after the ConfigMap was read: a claim in it whose Job was created
	// since is found live.
	jobs, err := r.jobs(ctx)
	if err != nil {
		return false, err
	}
	live := map[string]bool{}
	exists := map[string]bool{}
	for i := range jobs {
		exists[jobs[i].Name] = true
		if st, _ := jobStatus(&jobs[i]); !st.Ended() {
			live[jobs[i].Name] = true
		}
	}
	now := r.opts.Now()
	kept := map[string]string{}
	for sid, at := range cm.Data {
		t, perr := time.Parse(time.RFC3339Nano, at)
		if live[sid] || (!exists[sid] && perr == nil && claimCounts(now, t)) {
			kept[sid] = at
		}
	}
	inFlight := len(kept)
	for sid := range live {
		if _, ok := kept[sid]; !ok {
			inFlight++ // a session no launch claimed: fired by a CronJob
		}
	}
	if inFlight >= r.opts.MaxConcurrent {
		return false, &RefusedError{Msg: fmt.Sprintf("launching: %d sessions in flight in namespace %s, maxConcurrent is %d: wait for one to end, or cancel one", inFlight, r.opts.Namespace, r.opts.MaxConcurrent)}
	}
	kept[id] = now.UTC().Format(time.RFC3339Nano)
	cm.Data = kept
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); apierrors.IsConflict(err) {
		return false, nil
	} else if err != nil {
		return false, r.apiError("launching: claiming a slot of maxConcurrent (ConfigMap "+SlotsConfigMap+")", "update configmaps/"+SlotsConfigMap, err)
	}
	return true, nil
}

// unclaim gives back the slot of a launch whose Job was not created; should it fail, the claim
// lapses after claimGrace.
func (r *Runner) unclaim(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cms := r.opts.Client.CoreV1().ConfigMaps(r.opts.Namespace)
	for ctx.Err() == nil {
		cm, err := cms.Get(ctx, SlotsConfigMap, metav1.GetOptions{})
		if err != nil {
			return
		}
		if _, ok := cm.Data[id]; !ok {
			return
		}
		delete(cm.Data, id)
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			return
		}
	}
}
