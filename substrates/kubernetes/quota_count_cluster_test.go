package kubernetes

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/autonomyhq/autonomy/internal/k8stest"
	"github.com/autonomyhq/autonomy/ir"
)

// TestQuotaCountsJobsAndAsks: a session's token could once create Jobs and asks until etcd was
// full (the quota counted pods only, and a fleet without a maxConcurrent had none). In a fleet
// without a maxConcurrent, with maxJobs 3 and maxAsks 2, the quota is installed all the same and
// holds the namespace's Jobs at 3 plus 5 for its cron trigger, and its ConfigMaps at the 2 asks
// plus the fleet's own and the cluster's: boss's token creates 8 Jobs and the 9th is refused
// (count/jobs.batch), and its asks are refused once the ConfigMaps are at the count
// (count/configmaps), whoever parks them.
func TestQuotaCountsJobsAndAsks(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("quota-count")
	profile := strings.Replace(fleetProfile, "  maxConcurrent: 2\n", "", 1)
	profile = strings.Replace(profile, "      timeZone: Europe/Paris\n", "      timeZone: Europe/Paris\n      maxJobs: 3\n      maxAsks: 2\n", 1)
	admin := installProfile(t, c, ns, profile)
	ctx := context.Background()
	q, err := admin.CoreV1().ResourceQuotas(ns).Get(ctx, QuotaName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jobsHard, cmHard := q.Spec.Hard["count/jobs.batch"], q.Spec.Hard["count/configmaps"]
	if jobsHard.Value() != 3+cronJobsKept || cmHard.Value() != 2+2+configMapsExtra {
		t.Fatalf("the quota holds %v; want count/jobs.batch %d and count/configmaps %d", q.Spec.Hard, 3+cronJobsKept, 2+2+configMapsExtra)
	}
	if _, ok := q.Spec.Hard[corev1.ResourcePods]; ok {
		t.Errorf("a fleet without a maxConcurrent bounds its pods: %v", q.Spec.Hard)
	}

	jobs := as(c.Config, ns, "boss").BatchV1().Jobs(ns)
	for i := range 3 + cronJobsKept {
		if _, err := jobs.Create(ctx, sessionJobBy(t, admin, ns, "boss", "worker_1", fmt.Sprintf("s-%016x", i)), metav1.CreateOptions{}); err != nil {
			t.Fatalf("Job %d: %v", i+1, err)
		}
	}
	_, err = jobs.Create(ctx, sessionJobBy(t, admin, ns, "boss", "worker_1", "s-00000000000000ff"), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "exceeded quota") || !strings.Contains(err.Error(), "count/jobs.batch") {
		t.Errorf("a Job past the count: %v, want refused by the quota (count/jobs.batch)", err)
	}

	owner := RunnerActor{Name: "owner", Human: true, Params: []string{"TOPIC"}, Sources: []Param{{"TOPIC", "subject.text"}}}
	boss, err := NewRunner(RunnerOptions{Client: runnerClient(t, asConfig(c.Config, ns, "boss")), Namespace: ns,
		Actors: []RunnerActor{owner, {Name: "boss"}}, AskedBy: &Asker{Actor: "boss"}})
	if err != nil {
		t.Fatal(err)
	}
	// The fleet holds 2 ConfigMaps (the installation, the fleet config) and the cluster its
	// kube-root-ca.crt; the rest of the count is room.
	parked := 0
	for ; parked <= int(cmHard.Value()); parked++ {
		if _, err = boss.engage(ctx, &owner, "#1", ir.LaunchParams{"TOPIC": "x"}); err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "count/configmaps") || !strings.Contains(err.Error(), "maxAsks") {
		t.Fatalf("%d asks parked, the last: %v; want refused by the quota (count/configmaps), naming maxAsks", parked, err)
	}
	if parked > int(cmHard.Value())-2 || parked < 2 {
		t.Errorf("%d asks parked before the quota refused one; want from 2 to %d", parked, cmHard.Value()-2)
	}
}

// TestLaunchParamsAreDeclaredAndBounded: a session's token (boss, agent:launch) could once
// create Jobs carrying a param its actor does not declare, of any size (30 Jobs with 120 KiB
// each). The launch policy refuses a param worker_1 does not declare, and a declared one, a ref
// or params past their bounds in bytes (4-byte runes too: a CEL string's size counts code
// points), and admits a declared param within them; the operator's runner refuses a launch past
// the bounds before it creates anything.
func TestLaunchParamsAreDeclaredAndBounded(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("launch-bounds")
	install(t, c.Config, ns)
	cs := kubernetes.NewForConfigOrDie(c.Config)
	ctx := context.Background()
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	jobs := as(c.Config, ns, "boss").BatchV1().Jobs(ns)
	pt, err := cs.CoreV1().PodTemplates(ns).Get(ctx, ObjectName("worker_1"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A Job of worker_1 as the runner builds it for boss's launch, with ref and params.
	with := func(id, ref string, params map[string]string) error {
		params["WHO"], params["ROLE"] = "boss", "NONE"
		_, err := jobs.Create(ctx, SessionJob(ns, JobTemplate(pt), Session{ID: id, Ref: ref, Params: params}), dry)
		return err
	}
	// worker_1's launches have a policy of their own, which takes effect on its own time.
	waitPolicy(t, func() error {
		job := SessionJob(ns, JobTemplate(pt), Session{ID: "s-waiting", Ref: "#1", Params: map[string]string{"WHO": "boss", "ROLE": "NONE"}})
		job.Annotations["example.com/x"] = "y"
		_, err := jobs.Create(ctx, job, dry)
		return err
	})
	if err := with("s-ok", "#1", map[string]string{"MODE": strings.Repeat("x", 60<<10)}); err != nil {
		t.Errorf("a declared param of 60 KiB is refused: %v", err)
	}
	for what, tc := range map[string]struct {
		ref    string
		params map[string]string
	}{
		"an undeclared param":              {"#1", map[string]string{"EXTRA": "x"}},
		"an undeclared param of 120 KiB":   {"#1", map[string]string{"EXTRA": strings.Repeat("x", 120<<10)}},
		"a declared param of 120 KiB":      {"#1", map[string]string{"MODE": strings.Repeat("x", 120<<10)}},
		"a declared param of 4-byte runes": {"#1", map[string]string{"MODE": strings.Repeat("\U0001F600", MaxLaunchParams/4+1)}},
		"two declared params, 40 KiB each": {"#1", map[string]string{"MODE": strings.Repeat("x", 40<<10), "VERDICT": strings.Repeat("x", 40<<10)}},
		"a ref past its bound":             {strings.Repeat("7", MaxLaunchRef+1), map[string]string{}},
		"a ref of 4-byte runes":            {strings.Repeat("\U0001F600", MaxLaunchRef/4+1), map[string]string{}},
	} {
		if err := with("s-tampered", tc.ref, tc.params); err == nil || !strings.Contains(err.Error(), "denied request") {
			t.Errorf("a launch with %s: %v, want denied by the admission policy", what, err)
		}
	}
	// The runner refuses them first, saying so.
	op, err := OpenRunner(ctx, runnerClient(t, c.Config), ns, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.LaunchRef(ctx, "worker_1", "#1", ir.LaunchParams{"MODE": strings.Repeat("\U0001F600", MaxLaunchParams/4)}); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("the runner launching params of 64 KiB of 4-byte runes: %v, want refused", err)
	}
	if _, err := op.LaunchRef(ctx, "worker_1", strings.Repeat("7", MaxLaunchRef+1), nil); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("the runner launching a ref of 1 KiB + 1: %v, want refused", err)
	}
	// A param's env entry that its JSON (AUTONOMY_FORWARD and the annotation) does not hold.
	job := SessionJob(ns, JobTemplate(pt), Session{ID: "s-env", Ref: "#1", Params: map[string]string{"WHO": "boss", "ROLE": "NONE"}})
	addEnv(job, "MODE", strings.Repeat("\U0001F600", MaxLaunchParams/4+1))
	if _, err := jobs.Create(ctx, job, dry); err == nil || !strings.Contains(err.Error(), "denied request") {
		t.Errorf("a launch whose env carries a param of 64 KiB of 4-byte runes its params do not: %v, want denied by the admission policy", err)
	}
}
