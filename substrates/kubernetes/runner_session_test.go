package kubernetes

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// verdictSchema is the result contract of the tests' worker.
var verdictSchema = map[string]any{
	"type":                 "object",
	"required":             []any{"verdict"},
	"properties":           map[string]any{"verdict": map[string]any{"enum": []any{"approve", "reject"}}},
	"additionalProperties": false,
}

// sessionPod waits for the Job of session id to complete through kwok and returns its pod,
// checking that it was scheduled and succeeded.
func sessionPod(t *testing.T, cs kubernetes.Interface, ns, id string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	Eventually(t, 60*time.Second, "the Job of "+id+" completes", func() (bool, error) {
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, id, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.Set{batchv1.JobNameLabel: id}.String()})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("the pods of %s: %v, %v", id, pods, err)
	}
	p := &pods.Items[0]
	if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("pod %s: node %q, phase %s; want scheduled and Succeeded", p.Name, p.Spec.NodeName, p.Status.Phase)
	}
	return p
}

// writeResult plays the kubelet of the session's pod: when the session container ends, it copies
// what the container wrote to its termination message file into the pod's status.
func writeResult(t *testing.T, cs kubernetes.Interface, p *corev1.Pod, msg string) {
	t.Helper()
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		if cs.Name == ContainerName {
			if cs.State.Terminated == nil {
				cs.State.Terminated = &corev1.ContainerStateTerminated{Reason: "Completed"}
			}
			cs.State.Terminated.Message = msg
		}
	}
	if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestSessionIsDoneOnlyWithAValidResult: a launched session's Job is created, scheduled and runs
// to Succeeded through kwok; it is done with a result that satisfies its actor's contract, and
// failed with none, with one that does not satisfy it, with one that is not JSON, and with one
// the kubelet may have cut.
func TestSessionIsDoneOnlyWithAValidResult(t *testing.T) {
	cs, _ := ClusterClient(t)
	ns := ClusterNamespace(t, cs)
	InstallTemplates(t, cs, SessionPodTemplate(ns, "worker", nil))
	r, err := NewRunner(RunnerOptions{Client: RunnerClient(t), Namespace: ns, Actors: []RunnerActor{{Name: "worker", Result: verdictSchema, Params: []string{"P"}}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		name, result string
		want         ir.SessionStatus
	}{
		{"valid", `{"verdict":"approve"}`, ir.Done},
		{"missing", "", ir.Failed},
		{"unsatisfied", `{"verdict":"maybe"}`, ir.Failed},
		{"not JSON", `{"verdict":`, ir.Failed},
		{"too long", `{"verdict":"approve","x":"` + strings.Repeat("x", MaxResultBytes) + `"}`, ir.Failed},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := r.LaunchRef(ctx, "worker", "issue 7", ir.LaunchParams{"P": c.name})
			if err != nil {
				t.Fatal(err)
			}
			if s.Status != ir.Running || s.Ref != "issue 7" {
				t.Fatalf("launch returned %+v", s)
			}
			p := sessionPod(t, cs, ns, s.ID)
			if c.result != "" {
				writeResult(t, cs, p, c.result)
			}
			got, ok, err := r.Get(ctx, s.ID)
			if err != nil || !ok {
				t.Fatalf("get %s: %v %v", s.ID, ok, err)
			}
			if got.Status != c.want {
				t.Fatalf("session with result %.40q is %s, want %s", c.result, got.Status, c.want)
			}
			if st, why, _ := r.verify(ctx, mustJob(t, cs, ns, s.ID)); st == ir.Failed && why == "" {
				t.Error("a failed session says no reason")
			}
		})
	}
}

func mustJob(t *testing.T, cs kubernetes.Interface, ns, id string) *batchv1.Job {
	t.Helper()
	j, err := cs.BatchV1().Jobs(ns).Get(context.Background(), id, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestCancelKeepsTheSessionReadable: cancel deletes the session's pods and ends its Job, which
// stays, read as cancelled by get (and by another process), out of list, until its
// ttlSecondsAfterFinished removes it; a paused session is cancelled so too, its pod never made
// again.
func TestCancelKeepsTheSessionReadable(t *testing.T) {
	cs, _ := ClusterClient(t)
	ns := ClusterNamespace(t, cs)
	InstallTemplates(t, cs, HeldPodTemplate(ns, "probe"))
	r, err := NewRunner(RunnerOptions{Client: RunnerClient(t), Namespace: ns, Actors: []RunnerActor{{Name: "probe"}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, paused := range []bool{false, true} {
		cancelIsReadable(t, cs, r, ns, paused)
	}

	// A cancelled Job is removed as an ended one is: by its ttlSecondsAfterFinished
	// (policy.box.kubernetes.keepFinished; a second here).
	brief := HeldPodTemplate(ns, "brief")
	brief.Annotations[AnnotationKeepFinished] = "1"
	InstallTemplates(t, cs, brief)
	rb, err := NewRunner(RunnerOptions{Client: RunnerClient(t), Namespace: ns, Actors: []RunnerActor{{Name: "brief"}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := rb.Launch(ctx, "brief", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := rb.Cancel(ctx, b.ID); !ok || err != nil {
		t.Fatalf("cancel %s: %v %v", b.ID, ok, err)
	}
	Eventually(t, 60*time.Second, "keepFinished removes the cancelled session", func() (bool, error) {
		_, ok, err := rb.Get(ctx, b.ID)
		return !ok, err
	})

	// Of concurrent cancels of one session, from runners that share nothing, exactly one wins.
	s, err := r.Launch(ctx, "probe", nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wins := make(chan bool, 8)
	for range 8 {
		other, err := NewRunner(r.opts)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := other.Cancel(ctx, s.ID)
			if err != nil {
				t.Error(err)
			}
			wins <- ok
		}()
	}
	wg.Wait()
	close(wins)
	n := 0
	for ok := range wins {
		if ok {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d of 8 concurrent cancels won, want 1", n)
	}
}

// TestLaunchRefusesReservedAndUnknown: a param the session's container sets, or an actor the
// fleet lacks, is refused before any Job is made.
func TestLaunchRefusesReservedAndUnknown(t *testing.T) {
	cs, _ := ClusterClient(t)
	ns := ClusterNamespace(t, cs)
	InstallTemplates(t, cs, HeldPodTemplate(ns, "probe"))
	r, err := NewRunner(RunnerOptions{Client: RunnerClient(t), Namespace: ns, Actors: []RunnerActor{{Name: "probe", Params: []string{"P"}}, {Name: "ghost"}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		actor  string
		params ir.LaunchParams
		want   string
	}{
		{"probe", ir.LaunchParams{EnvActor: "x"}, "param AUTONOMY_ACTOR is reserved"},
		{"probe", ir.LaunchParams{EnvParams: "x"}, "param AUTONOMY_FORWARD is reserved"},
		{"probe", ir.LaunchParams{"AUTONOMY_BEHAVIOR": "/x"}, `param "AUTONOMY_BEHAVIOR" is reserved`},
		{"probe", ir.LaunchParams{"LD_PRELOAD": "/x.so"}, `param "LD_PRELOAD" is reserved: a tool of the session's box reads it`},
		{"probe", ir.LaunchParams{"HTTPS_PROXY": "http://10.1.2.3"}, `param "HTTPS_PROXY" is reserved`},
		{"probe", ir.LaunchParams{"https_proxy": "http://10.1.2.3"}, `param "https_proxy" is reserved`},
		{"probe", ir.LaunchParams{"OPENAI_BASE_URL": "http://10.1.2.3"}, `param "OPENAI_BASE_URL" is reserved`},
		{"probe", ir.LaunchParams{"PATH": "/tmp"}, `param "PATH" is reserved`},
		{"probe", ir.LaunchParams{"P": "x", "SHELLOPTS": "xtrace"}, `param "SHELLOPTS" is reserved`},
		{"probe", ir.LaunchParams{"PS4": "$(id)"}, `param "PS4" is reserved`},
		{"probe", ir.LaunchParams{"NODE_OPTIONS": "--require /x"}, `param "NODE_OPTIONS" is reserved`},
		{"probe", ir.LaunchParams{"P": "x", "Q": "y"}, `actor "probe" declares no param "Q" (valid: P)`},
		{"probe", ir.LaunchParams{"p\nX": "y"}, `param "p\nX" is reserved: it is not an environment variable name`},
		{"prob", nil, `did you mean "probe"`},
		{"ghost", nil, "no PodTemplate ghost"},
	} {
		if _, err := r.Launch(ctx, c.actor, c.params); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("launch %s %v: %v, want %q", c.actor, c.params, err, c.want)
		}
	}
	jobs, err := cs.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(jobs.Items) != 0 {
		t.Errorf("refused launches made Jobs: %v %v", jobs, err)
	}
	var denied *DeniedError
	r.opts.Caller = &substrates.Caller{Who: `actor "pm"`, Caps: substrates.ParseCapabilities([]string{"agent:list", "agent:launch@other"})}
	if _, err := r.Launch(ctx, "probe", nil); !errors.As(err, &denied) {
		t.Errorf("a caller without agent:launch launched: %v", err)
	}
}

// jobEnd is the condition a Job ended with ("" while it runs).
func jobEnd(j *batchv1.Job) (batchv1.JobConditionType, string) {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type, c.Reason
		}
	}
	return "", ""
}

// cancelIsReadable launches a session of probe (paused first when paused), cancels it, and checks
// that its pods go, its Job ends and stays, read as cancelled by r and by another runner, and out
// of list.
func cancelIsReadable(t *testing.T, cs kubernetes.Interface, r *Runner, ns string, paused bool) {
	t.Helper()
	ctx := context.Background()
	s, err := r.Launch(ctx, "probe", nil)
	if err != nil {
		t.Fatal(err)
	}
	sel := metav1.ListOptions{LabelSelector: labels.Set{batchv1.JobNameLabel: s.ID}.String()}
	Eventually(t, 30*time.Second, "the Job's pod is created", func() (bool, error) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, sel)
		return err == nil && len(pods.Items) == 1, err
	})
	if paused {
		if ok, err := r.Update(ctx, s.ID, ir.Patch{Status: ir.Paused}); !ok || err != nil {
			t.Fatalf("pause: %v %v", ok, err)
		}
	}
	if ok, err := r.Cancel(ctx, s.ID); !ok || err != nil {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	if ok, err := r.Cancel(ctx, s.ID); ok || err != nil {
		t.Fatalf("a second cancel: %v %v, want false", ok, err)
	}
	Eventually(t, 30*time.Second, "the pods are gone and the Job has ended", func() (bool, error) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, sel)
		if err != nil {
			return false, err
		}
		st, _ := jobEnd(mustJob(t, cs, ns, s.ID))
		return len(pods.Items) == 0 && st != "", nil
	})
	if got, ok, err := r.Get(ctx, s.ID); !ok || err != nil || got.Status != ir.Cancelled {
		t.Errorf("get after cancel (paused %v): %+v %v %v, want cancelled", paused, got, ok, err)
	}
	if other, err := NewRunner(r.opts); err != nil {
		t.Fatal(err)
	} else if got, ok, err := other.Get(ctx, s.ID); !ok || err != nil || got.Status != ir.Cancelled {
		t.Errorf("another runner's get after cancel: %+v %v %v", got, ok, err)
	}
	if ok, err := r.Update(ctx, s.ID, ir.Patch{Status: ir.Running}); ok || err != nil {
		t.Errorf("resuming a cancelled session: %v %v, want false", ok, err)
	}
	if ss, err := r.List(ctx); len(ss) != 0 || err != nil {
		t.Errorf("list after cancel: %v %v", ss, err)
	}
}

// TestLaunchResolvesParamSources: a launch fills each param its actor's dispatch trigger binds to
// a source: the operator's with its firing (subject.actor from --from, actorRole OWNER,
// trigger.kind dispatch), a session's with its own actor and NONE; a session setting either (a
// param bound to it, or --from naming another actor) is denied and starts nothing.
func TestLaunchResolvesParamSources(t *testing.T) {
	cs, _ := ClusterClient(t)
	ns := ClusterNamespace(t, cs)
	InstallTemplates(t, cs, HeldPodTemplate(ns, "probe"))
	probe := RunnerActor{Name: "probe", Params: []string{"R", "T", "A", "W", "K"},
		Sources: []Param{{"R", "subject.ref"}, {"T", "subject.text"}, {"A", "subject.actor"}, {"W", "subject.actorRole"}, {"K", "trigger.kind"}}}
	op, err := NewRunner(RunnerOptions{Client: RunnerClient(t), Namespace: ns, Actors: []RunnerActor{probe}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := op.LaunchFiring(ctx, "probe", Firing{Ref: "42", Text: "fix $(id)\nnow", From: "octocat"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := ir.LaunchParams{"R": "42", "T": "fix $(id)\nnow", "A": "octocat", "W": "OWNER", "K": "dispatch"}
	if got, _, err := op.Get(ctx, s.ID); err != nil || !maps.Equal(got.Params, want) {
		t.Errorf("the operator's launch: %v %v, want %v", got.Params, err, want)
	}
	caller := &substrates.Caller{Who: `actor "launcher"`, Caps: substrates.ParseCapabilities([]string{"agent:launch@probe"})}
	in, err := NewRunner(RunnerOptions{Client: RunnerClient(t), Namespace: ns, Actors: []RunnerActor{probe}, Caller: caller, CallerActor: "launcher"})
	if err != nil {
		t.Fatal(err)
	}
	for _, forged := range []struct {
		f      Firing
		params ir.LaunchParams
	}{{Firing{}, ir.LaunchParams{"W": "OWNER"}}, {Firing{}, ir.LaunchParams{"A": "octocat"}}, {Firing{From: "octocat"}, nil},
		{Firing{Kind: "cron"}, nil}, {Firing{}, ir.LaunchParams{"K": "event"}}} {
		var denied *DeniedError
		if s, err := in.LaunchFiring(ctx, "probe", forged.f, forged.params); !errors.As(err, &denied) {
			t.Errorf("a session's launch with %+v %v: %+v %v, want denied", forged.f, forged.params, s, err)
		}
	}
	s, err = in.LaunchFiring(ctx, "probe", Firing{Ref: "7"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want = ir.LaunchParams{"R": "7", "T": "", "A": "launcher", "W": "NONE", "K": "dispatch"}
	if got, _, err := op.Get(ctx, s.ID); err != nil || !maps.Equal(got.Params, want) {
		t.Errorf("a session's launch: %v %v, want %v", got.Params, err, want)
	}
	if ss, err := op.List(ctx); err != nil || len(ss) != 2 {
		t.Errorf("the sessions in flight: %v %v, want the two launched", ss, err)
	}
}
