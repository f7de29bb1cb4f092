package kubernetes

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/autonomyhq/autonomy/internal/k8stest"
)

// TestSessionCannotLookCronFired: a Job a session's ServiceAccount creates that leaves out the
// params its actor's dispatch launch binds to subject.actor and subject.actorRole (worker_1's WHO
// and ROLE: no actor, no role, what a cron fire looks like), or sets a param bound to
// trigger.kind (triage's KIND) to anything but dispatch, is refused by the admission policy;
// a launch leaving out a param bound only on a cron trigger (triage's KIND and REF) is admitted.
func TestSessionCannotLookCronFired(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("cronlike")
	install(t, c.Config, ns)
	admin := kubernetes.NewForConfigOrDie(c.Config)
	create := func(launcher, actor string, params map[string]string) error {
		pt, err := admin.CoreV1().PodTemplates(ns).Get(context.Background(), ObjectName(actor), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		job := SessionJob(ns, JobTemplate(pt), Session{ID: "s-cronlike", Params: params})
		_, err = as(c.Config, ns, launcher).BatchV1().Jobs(ns).Create(context.Background(), job, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	waitPolicy(t, func() error { return create("triage", "worker_1", map[string]string{"WHO": "boss", "ROLE": "NONE"}) })
	for _, ok := range []struct {
		launcher, actor string
		params          map[string]string
	}{
		{"triage", "worker_1", map[string]string{"WHO": "triage", "ROLE": "NONE", "MODE": "x"}},
		{"boss", "worker_1", map[string]string{"WHO": "boss", "ROLE": "NONE"}},
		{"boss", "triage", nil},
		{"boss", "triage", map[string]string{"KIND": "dispatch", "REF": "#1"}},
	} {
		if err := create(ok.launcher, ok.actor, ok.params); err != nil {
			t.Errorf("%s launching %s with %v is refused: %v", ok.launcher, ok.actor, ok.params, err)
		}
	}
	for _, bad := range []struct {
		launcher, actor string
		params          map[string]string
	}{
		{"triage", "worker_1", map[string]string{"MODE": "x"}},
		{"triage", "worker_1", nil},
		{"triage", "worker_1", map[string]string{"WHO": "triage"}},
		{"triage", "worker_1", map[string]string{"ROLE": "NONE"}},
		{"boss", "worker_1", map[string]string{"MODE": "x", "VERDICT": "y"}},
		{"boss", "triage", map[string]string{"KIND": "cron"}},
		{"boss", "triage", map[string]string{"KIND": ""}},
	} {
		err := create(bad.launcher, bad.actor, bad.params)
		if err == nil || !strings.Contains(err.Error(), "denied request") {
			t.Errorf("%s launching %s with %s: %v, want refused by the admission policy", bad.launcher, bad.actor, fmt.Sprint(bad.params), err)
		}
	}
}
