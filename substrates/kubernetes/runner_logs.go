package kubernetes

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// MaxLogBytes bounds what Logs copies of one session's log.
const MaxLogBytes = 64 << 20

// logPoll is the pause between looks for a session's pod while following.
const logPoll = 500 * time.Millisecond

// Logs writes the log of a session's agent container (its newest pod's) to w. Follow streams it
// as the container writes it until the container ends (or ctx does), waiting first for the pod
// to start when it has not yet; without follow, a session whose pod has not started has no log
// yet, and says so.
func (r *Runner) Logs(ctx context.Context, id string, follow bool, w io.Writer) error {
	for {
		job, err := r.getJob(ctx, id)
		if err != nil {
			return err
		}
		if job == nil {
			return fmt.Errorf("no session %s in namespace %s", id, r.opts.Namespace)
		}
		if err := r.authorize("list", actorOf(job)); err != nil {
			return err
		}
		pod, err := r.newestPod(ctx, id, job.UID)
		if err != nil {
			return err
		}
		if pod != nil && (pod.Status.Phase != corev1.PodPending || !follow) {
			agent := ContainerName
			return r.podLog(ctx, pod, agent, follow, w)
		}
		st, _ := jobStatus(job)
		if !follow || st.Ended() {
			fmt.Fprintf(w, "session %s (%s) has no log: its pod has not started\n", id, st)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(logPoll):
		}
	}
}

// newestPod is the newest pod of the Job uid; nil when it has none.
func (r *Runner) newestPod(ctx context.Context, id string, uid types.UID) (*corev1.Pod, error) {
	sel := labels.SelectorFromSet(labels.Set{batchv1.JobNameLabel: id}).String()
	pods, err := r.opts.Client.CoreV1().Pods(r.opts.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, r.apiError("finding the pod of session "+id, "list pods", err)
	}
	items := slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool {
		c := metav1.GetControllerOf(&p)
		return c == nil || c.UID != uid
	})
	if len(items) == 0 {
		return nil, nil
	}
	p := slices.MaxFunc(items, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	return &p, nil
}

func (r *Runner) podLog(ctx context.Context, pod *corev1.Pod, container string, follow bool, w io.Writer) error {
	limit := int64(MaxLogBytes)
	req := r.opts.Client.CoreV1().Pods(r.opts.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: container, Follow: follow, LimitBytes: &limit})
	rc, err := req.Stream(ctx)
	if err != nil {
		return r.apiError("reading the log of pod "+pod.Name, "get pods/log", err)
	}
	defer rc.Close()
	if _, err := io.Copy(w, io.LimitReader(rc, limit)); err != nil && ctx.Err() == nil {
		return fmt.Errorf("reading the log of pod %s: %w", pod.Name, err)
	}
	return ctx.Err()
}
