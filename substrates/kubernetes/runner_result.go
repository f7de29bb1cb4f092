package kubernetes

import (
	"context"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/autonomyhq/autonomy/internal/jsonschema"
	"github.com/autonomyhq/autonomy/internal/strictjson"
	"github.com/autonomyhq/autonomy/ir"
)

// A session's result travels back in its agent container's termination message: the container
// writes it to its termination message file (/dev/termination-log), and the kubelet of that
// pod, and only it, copies it into the pod's status when the container ends. The launcher reads
// it with get on pods, which agent:list grants. The pod can write its own result and nobody
// else's: no ServiceAccount of the fleet may write pods/status, and the file is in the
// container's own filesystem. The kubelet keeps at most 4096 bytes of it, so a result that long
// or longer is refused rather than read cut. A Job that completes without a result satisfying
// its actor's contract is failed, never done.

// verify decides whether a complete Job is done: its succeeded pod's result must satisfy the
// actor's contract. It returns done or failed with the reason.
func (r *Runner) verify(ctx context.Context, j *batchv1.Job) (ir.SessionStatus, string, error) {
	a := r.actors[actorOf(j)]
	if a == nil || a.Result == nil {
		return ir.Done, "", nil
	}
	msg, found, err := r.result(ctx, j)
	if err != nil {
		return "", "", err
	}
	if !found {
		return ir.Failed, "its Job completed without a result: the agent's container wrote no termination message", nil
	}
	if why := checkResult(a.Result, msg); why != "" {
		return ir.Failed, why, nil
	}
	return ir.Done, "", nil
}

// checkResult says why msg is not a result that satisfies schema ("" when it is one).
func checkResult(schema any, msg string) string {
	if len(msg) >= MaxResultBytes {
		return fmt.Sprintf("its result is %d bytes or more: the kubelet keeps %d bytes of a termination message, so a longer result arrives cut (keep the result under 4 KiB)", MaxResultBytes, MaxResultBytes)
	}
	doc, err := strictjson.Decode([]byte(msg))
	var ke *strictjson.KeyError
	if errors.As(err, &ke) {
		return "its result is refused: " + err.Error()
	}
	var ne *jsonschema.NumberError
	if errors.As(err, &ne) {
		return fmt.Sprintf("its result cannot be checked: %v", err)
	}
	if err != nil {
		return fmt.Sprintf("its result is not JSON: %v", err)
	}
	sch, err := jsonschema.Compile(schema)
	if err != nil {
		return fmt.Sprintf("the actor's result schema does not compile: %v", err)
	}
	if err := sch.Validate(doc); err != nil {
		return "its result does not satisfy the actor's result contract: " + ir.ExplainResultError(err)
	}
	return ""
}

// result reads the termination message of the agent container (the template's first) of the
// Job's succeeded pod.
func (r *Runner) result(ctx context.Context, j *batchv1.Job) (string, bool, error) {
	sel := labels.SelectorFromSet(labels.Set{batchv1.JobNameLabel: j.Name}).String()
	pods, err := r.opts.Client.CoreV1().Pods(r.opts.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return "", false, r.apiError("reading the result of session "+j.Name, "list pods", err)
	}
	agent := ContainerName
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodSucceeded || !ownedBy(&p, j) {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == agent && cs.State.Terminated != nil && cs.State.Terminated.Message != "" {
				return cs.State.Terminated.Message, true, nil
			}
		}
	}
	return "", false, nil
}

// ownedBy reports whether the Job j controls pod p: a pod labelled so by anyone else is not its.
func ownedBy(p *corev1.Pod, j *batchv1.Job) bool {
	c := metav1.GetControllerOf(p)
	return c != nil && c.UID == j.UID
}
