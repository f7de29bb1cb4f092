package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/autonomyhq/autonomy/internal/bounded"
	"github.com/autonomyhq/autonomy/internal/kubeclient"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/cron"
)

// The probe's seams that watch a session's process. The test rig's kwok fakes a kubelet that
// runs no container, and the probe fleet's pods are held unscheduled (heldSelector), so the
// probe plays the parts of the cluster a session's process needs, each on what the API server
// holds: the CronJob controller's firing at a fake minute (cronTick), the container env the pod
// was admitted with (podSeen), and a kubelet that runs the session container of an actor's pods
// as a process of the autonomy binary and writes their status (kubelet).

// Say what the probe played, in what the checks observed.
const (
	tickFrom = "each tick reads the CronJobs from the API server and, when a CronJob's schedule in its timeZone falls in the minutes since the last tick, creates the Job the CronJob controller creates for that minute, from its jobTemplate"
	seenFrom = "the env of the session container of the Job's pod, as the API server admitted it (the rig's kwok runs no container), holds"
	runsBy   = "kwok runs no container: the probe ran each session pod's container as a process of the autonomy binary, with the pod's env and the installation read from its ConfigMaps, and wrote the pod's status from its exit and termination message as a kubelet does"
)

// cronTick is a subject's TickAt: the CronJob controller's firing on a fake clock. A tick at now
// fires, for each of the fleet's CronJobs, the latest scheduled minute after the previous tick
// (the first tick only starts the clock), creating the Job the controller would: named for the
// minute, from the CronJob's jobTemplate, owned by it. It returns the sessions it launched.
func cronTick(cs *kubeclient.Client, r *Runner, ns string) func(context.Context, time.Time) ([]ir.Session, error) {
	var mu sync.Mutex
	var last time.Time
	return func(ctx context.Context, now time.Time) ([]ir.Session, error) {
		mu.Lock()
		defer mu.Unlock()
		since := last
		last = now
		if since.IsZero() {
			return nil, nil
		}
		cjs, err := listCronJobs(ctx, cs, ns)
		if err != nil {
			return nil, err
		}
		var fired []ir.Session
		for i := range cjs {
			at, err := scheduledIn(&cjs[i], since, now)
			if err != nil || at.IsZero() {
				if err != nil {
					return fired, err
				}
				continue
			}
			id, err := createCronJob(ctx, cs, &cjs[i], at)
			if err != nil {
				return fired, err
			}
			s, ok, err := r.Get(ctx, id)
			if err != nil || !ok {
				return fired, fmt.Errorf("the Job %s fired from CronJob %s is no session (%v)", id, cjs[i].Name, err)
			}
			fired = append(fired, s)
		}
		return fired, nil
	}
}

// scheduledIn is the latest minute in (since, now] cj's schedule fires at, in its timeZone
// (zero when none does).
func scheduledIn(cj *batchv1.CronJob, since, now time.Time) (time.Time, error) {
	loc := time.UTC
	if tz := cj.Spec.TimeZone; tz != nil && *tz != "" {
		var err error
		if loc, err = time.LoadLocation(*tz); err != nil {
			return time.Time{}, fmt.Errorf("CronJob %s: timeZone %q: %v", cj.Name, *tz, err)
		}
	}
	sched, err := cron.Parse(cj.Spec.Schedule)
	if err != nil {
		return time.Time{}, fmt.Errorf("CronJob %s: schedule %q: %v", cj.Name, cj.Spec.Schedule, err)
	}
	var at time.Time
	for t := sched.Next(since.In(loc)); !t.IsZero() && !t.After(now); t = sched.Next(t) {
		at = t
	}
	return at, nil
}

// listCronJobs lists the fleet's CronJobs in ns.
func listCronJobs(ctx context.Context, cs *kubeclient.Client, ns string) ([]batchv1.CronJob, error) {
	sel := labels.SelectorFromSet(labels.Set{LabelFleet: ns}).String()
	list, err := cs.BatchV1().CronJobs(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing the CronJobs of namespace %s: %w", ns, err)
	}
	return list.Items, nil
}

// createCronJob creates the Job the CronJob controller creates for cj's scheduled minute at, and
// returns its name: a Job already there for that minute is not created again.
func createCronJob(ctx context.Context, cs *kubeclient.Client, cj *batchv1.CronJob, at time.Time) (string, error) {
	t := cj.Spec.JobTemplate.DeepCopy()
	name := fmt.Sprintf("%s-%d", cj.Name, at.Unix()/60)
	ann := map[string]string{batchv1.CronJobScheduledTimestampAnnotation: at.Format(time.RFC3339)}
	for k, v := range t.Annotations {
		ann[k] = v
	}
	yes := true
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cj.Namespace, Labels: t.Labels, Annotations: ann,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: &yes, BlockOwnerDeletion: &yes}}},
		Spec: t.Spec,
	}
	_, err := cs.BatchV1().Jobs(cj.Namespace).Create(ctx, job, metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating Job %s from CronJob %s: %w", name, cj.Name, err)
	}
	return name, nil
}

// podSeen is a subject's Seen: the plain env of the session container of the pod of session id
// (nil until the Job controller made it).
func podSeen(cs *kubeclient.Client, ns string) func(context.Context, string) (map[string]string, error) {
	return func(ctx context.Context, id string) (map[string]string, error) {
		p, err := sessionPodOf(ctx, cs, ns, id)
		if p == nil || err != nil {
			return nil, err
		}
		seen := map[string]string{}
		for _, c := range p.Spec.Containers {
			if c.Name != ContainerName {
				continue
			}
			for _, e := range c.Env {
				if e.ValueFrom == nil {
					seen[e.Name] = e.Value
				}
			}
		}
		return seen, nil
	}
}

// sessionPodOf is the pod of session id, owned by its Job (nil when there is none yet).
func sessionPodOf(ctx context.Context, cs *kubeclient.Client, ns, id string) (*corev1.Pod, error) {
	sel := labels.SelectorFromSet(labels.Set{batchv1.JobNameLabel: id}).String()
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("the pods of session %s: %w", id, err)
	}
	for i := range pods.Items {
		if c := metav1.GetControllerOf(&pods.Items[i]); c != nil && c.Kind == "Job" && c.Name == id {
			return &pods.Items[i], nil
		}
	}
	return nil, nil
}

// podFiles is called with a pod the probe's kubelet ran and the root its installation volume was
// written to, once its process has ended and before that root is removed: what the process left
// there is the pod's filesystem, as a real kubelet's container leaves it until the pod is gone.
type podFiles func(p *corev1.Pod, root string)

// kubelet runs, until ctx ends, each pending pod of actors' sessions in ns once: its session
// container as a process of exe (runPod), then its status as a kubelet writes it. A pod it cannot
// run is failed with the reason as its termination message. seen, when set, reads what the
// process left in the pod's installation volume.
func kubelet(ctx context.Context, cs *kubeclient.Client, ns, exe string, actors []string, seen podFiles) {
	ran := map[string]bool{}
	runs := map[string]bool{}
	for _, a := range actors {
		runs[ObjectName(a)] = true
	}
	sel := labels.SelectorFromSet(labels.Set{LabelFleet: ns, LabelComponent: ComponentSession}).String()
	for ctx.Err() == nil {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err == nil {
			for i := range pods.Items {
				p := &pods.Items[i]
				if ran[p.Name] || !runs[p.Labels[LabelActor]] || p.Status.Phase != corev1.PodPending || p.DeletionTimestamp != nil {
					continue
				}
				ran[p.Name] = true
				code, msg, err := runPod(ctx, cs, exe, p, seen)
				if err != nil {
					code, msg = 2, "the probe's kubelet could not run the container: "+err.Error()
				}
				_ = writePodStatus(ctx, cs, p, code, msg)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// runPod runs the session container of p as a process of exe (the image's autonomy): p's args
// and env (a label read through the downward API resolved from p's labels), its installation
// volume written from the ConfigMaps it projects into a temp dir (writable here: a real pod's is
// read-only), its termination message file a temp file. It returns the exit code and the termination message as the kubelet keeps it.
func runPod(ctx context.Context, cs *kubeclient.Client, exe string, p *corev1.Pod, seen podFiles) (int, string, error) {
	var ctr *corev1.Container
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == ContainerName {
			ctr = &p.Spec.Containers[i]
		}
	}
	if ctr == nil || len(ctr.Args) == 0 || ctr.Args[0] != "autonomy" {
		return 0, "", fmt.Errorf("pod %s has no session container running autonomy", p.Name)
	}
	tmp, err := os.MkdirTemp("", "autonomy-k8s-kubelet-")
	if err != nil {
		return 0, "", err
	}
	defer os.RemoveAll(tmp)
	root, term := filepath.Join(tmp, "install"), filepath.Join(tmp, "termination-log")
	if err := os.WriteFile(term, nil, 0o644); err != nil {
		return 0, "", err
	}
	if err := projectInstall(ctx, cs, p, root); err != nil {
		return 0, "", err
	}
	env, err := containerEnv(p, ctr, root, term)
	if err != nil {
		return 0, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, ctr.Args[1:]...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp}, env...)
	cmd.Dir, cmd.Stdout, cmd.Stderr, cmd.WaitDelay = tmp, io.Discard, io.Discard, 5*time.Second
	code := 0
	var exit *exec.ExitError
	if err := cmd.Run(); errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		return 0, "", err
	}
	if seen != nil {
		seen(p, root)
	}
	msg, err := bounded.ReadFile(term, MaxResultBytes-1)
	if err != nil {
		return 0, "", err
	}
	return code, string(msg), nil
}

// containerEnv is ctr's env as the kubelet gives it: plain values, and the labels of p the
// downward API reads; the installation's and the termination file's paths are root and term.
func containerEnv(p *corev1.Pod, ctr *corev1.Container, root, term string) ([]string, error) {
	var env []string
	for _, e := range ctr.Env {
		v := e.Value
		if e.ValueFrom != nil {
			f := e.ValueFrom.FieldRef
			key, ok := "", false
			if f != nil {
				if k, pre := strings.CutPrefix(f.FieldPath, "metadata.labels['"); pre {
					key, ok = strings.CutSuffix(k, "']")
				}
			}
			if !ok {
				return nil, fmt.Errorf("env %s of pod %s: only a label read through the downward API is resolved here", e.Name, p.Name)
			}
			v = p.Labels[key]
		}
		if rest, ok := strings.CutPrefix(v, InstallDir); ok && (rest == "" || rest[0] == '/') {
			v = root + rest
		}
		if v == ctr.TerminationMessagePath {
			v = term
		}
		env = append(env, e.Name+"="+v)
	}
	return env, nil
}

// projectInstall writes the items of the ConfigMaps p's installation volume projects under root,
// read from the API server.
func projectInstall(ctx context.Context, cs *kubeclient.Client, p *corev1.Pod, root string) error {
	for _, v := range p.Spec.Volumes {
		if v.Name != InstallVolume || v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ConfigMap == nil {
				continue
			}
			cm, err := cs.CoreV1().ConfigMaps(p.Namespace).Get(ctx, src.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("the installation of pod %s: %w", p.Name, err)
			}
			for _, it := range src.ConfigMap.Items {
				full := filepath.Join(root, filepath.FromSlash(it.Path))
				if !filepath.IsLocal(filepath.FromSlash(it.Path)) {
					return fmt.Errorf("pod %s mounts %s outside its volume", p.Name, it.Path)
				}
				data, ok := cm.Data[it.Key]
				if !ok {
					data = string(cm.BinaryData[it.Key])
				}
				mode := os.FileMode(0o644)
				if it.Mode != nil {
					mode = os.FileMode(*it.Mode)
				} else if v.Projected.DefaultMode != nil {
					mode = os.FileMode(*v.Projected.DefaultMode)
				}
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(full, []byte(data), mode|0o400); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// writePodStatus writes p's status as the kubelet does when its session container ended with
// code: Succeeded or Failed, the container terminated with its message.
func writePodStatus(ctx context.Context, cs *kubeclient.Client, p *corev1.Pod, code int, msg string) error {
	now := metav1.Now()
	phase, reason := corev1.PodSucceeded, "Completed"
	if code != 0 {
		phase, reason = corev1.PodFailed, "Error"
	}
	for {
		p.Status.Phase = phase
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: ContainerName, Image: p.Spec.Containers[0].Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: int32(code), Reason: reason, Message: msg, StartedAt: now, FinishedAt: now}}}}
		_, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			return err
		}
		if p, err = cs.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{}); err != nil {
			return err
		}
	}
}
