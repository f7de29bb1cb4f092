package kubernetes

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/autonomyhq/autonomy/internal/k8stest"
	"github.com/autonomyhq/autonomy/ir"
)

// TestOperatorLaunchReclaimsFinishedJobs: the quota's count/jobs.batch counts finished Jobs, so
// a fleet whose count holds only finished sessions and one paused one had every launch refused
// until keepFinished (a day) removed some. With maxJobs 3 (a count of 8 with the cron trigger's
// 5) full of 7 finished sessions and a paused one, a session's launch (boss) is still refused,
// naming the count, and deletes nothing; the operator's launch deletes the finished sessions'
// Jobs, oldest first, and runs, and the paused session stays.
func TestOperatorLaunchReclaimsFinishedJobs(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("reclaim")
	profile := strings.Replace(fleetProfile, "  maxConcurrent: 2\n", "", 1)
	profile = strings.Replace(profile, "      timeZone: Europe/Paris\n", "      timeZone: Europe/Paris\n      maxJobs: 3\n", 1)
	admin := installProfile(t, c, ns, profile)
	ctx := context.Background()
	full := 3 + cronJobsKept
	for i := range full - 1 {
		id := fmt.Sprintf("s-%016x", i)
		if _, err := admin.BatchV1().Jobs(ns).Create(ctx, sessionJob(t, admin, ns, "worker_1", id), metav1.CreateOptions{}); err != nil {
			t.Fatalf("Job %d: %v", i+1, err)
		}
		Eventually(t, 60*time.Second, "session "+id+" finishes", func() (bool, error) {
			j, err := admin.BatchV1().Jobs(ns).Get(ctx, id, metav1.GetOptions{})
			return err == nil && !finishedAt(j).IsZero(), err
		})
	}
	paused := sessionJob(t, admin, ns, "worker_1", "s-paused")
	yes := true
	paused.Spec.Suspend = &yes
	if _, err := admin.BatchV1().Jobs(ns).Create(ctx, paused, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sessions := func() []string {
		list, err := admin.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.Set{LabelComponent: ComponentSession}.String()})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, j := range list.Items {
			out = append(out, j.Name)
		}
		return out
	}
	if n := len(sessions()); n != full {
		t.Fatalf("%d session Jobs, want the count's %d", n, full)
	}

	boss, err := openRunner(ctx, runnerClient(t, asConfig(c.Config, ns, "boss")), runnerClient(t, c.Config), ns, "boss")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := boss.LaunchRef(ctx, "worker_1", "#1", nil); err == nil || !strings.Contains(err.Error(), "count/jobs.batch") {
		t.Errorf("a session's launch at the count: %v, want refused by the quota", err)
	}
	if n := len(sessions()); n != full {
		t.Errorf("a session's refused launch left %d session Jobs, want all %d", n, full)
	}

	op, err := OpenRunner(ctx, runnerClient(t, c.Config), ns, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := op.LaunchRef(ctx, "worker_1", "#1", nil)
	if err != nil {
		t.Fatalf("the operator's launch at a count of finished sessions: %v", err)
	}
	left := sessions()
	if !strings.Contains(strings.Join(left, " "), "s-paused") || !strings.Contains(strings.Join(left, " "), s.ID) {
		t.Errorf("after the operator's launch: %v, want the paused session and %s", left, s.ID)
	}
	if len(left) != full-min(full-1, reclaimBatch)+1 {
		t.Errorf("after the operator's launch: %v, want every finished session's Job deleted (at most %d)", left, reclaimBatch)
	}
}

// TestOperatorAskReclaimsEndedAsks: an ended ask's ConfigMap counts in count/configmaps until
// deleted and has no TTL, so a fleet with a person had its asks refused for good once maxAsks of
// them had ended. With maxAsks 2, the operator parks asks until the count refuses one; with all
// but the last cancelled (ended), a session's ask (boss) is still refused and deletes nothing,
// and the operator's deletes the ended asks, oldest first, and is parked; the open ask stays.
func TestOperatorAskReclaimsEndedAsks(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("reclaim-asks")
	profile := strings.Replace(fleetProfile, "  maxConcurrent: 2\n", "", 1)
	profile = strings.Replace(profile, "      timeZone: Europe/Paris\n", "      timeZone: Europe/Paris\n      maxAsks: 2\n", 1)
	admin := installProfile(t, c, ns, profile)
	ctx := context.Background()
	op, err := OpenRunner(ctx, runnerClient(t, c.Config), ns, "")
	if err != nil {
		t.Fatal(err)
	}
	var parked []string
	for len(parked) <= 20 {
		s, err := op.LaunchRef(ctx, "owner", "#1", ir.LaunchParams{"TOPIC": "x"})
		if err != nil {
			if !strings.Contains(err.Error(), "count/configmaps") {
				t.Fatalf("ask %d: %v, want refused by the quota (count/configmaps)", len(parked)+1, err)
			}
			break
		}
		parked = append(parked, s.ID)
	}
	if len(parked) < 2 || len(parked) > 20 {
		t.Fatalf("%d asks parked before the count refused one", len(parked))
	}
	open := parked[len(parked)-1]
	for _, id := range parked[:len(parked)-1] {
		if ok, err := op.Cancel(ctx, id); !ok || err != nil {
			t.Fatalf("cancel %s: %v, %v", id, ok, err)
		}
	}
	asks := func() []string {
		list, err := admin.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.Set{LabelComponent: ComponentAsk}.String()})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, cm := range list.Items {
			out = append(out, cm.Name)
		}
		return out
	}
	boss, err := openRunner(ctx, runnerClient(t, asConfig(c.Config, ns, "boss")), runnerClient(t, c.Config), ns, "boss")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := boss.LaunchRef(ctx, "owner", "#1", ir.LaunchParams{"TOPIC": "x"}); err == nil || !strings.Contains(err.Error(), "count/configmaps") {
		t.Errorf("a session's ask at the count: %v, want refused by the quota", err)
	}
	if n := len(asks()); n != len(parked) {
		t.Errorf("a session's refused ask left %d asks, want all %d", n, len(parked))
	}
	s, err := op.LaunchRef(ctx, "owner", "#1", ir.LaunchParams{"TOPIC": "x"})
	if err != nil {
		t.Fatalf("the operator's ask at a count of ended asks: %v", err)
	}
	left := strings.Join(asks(), " ")
	if !strings.Contains(left, open) || !strings.Contains(left, s.ID) {
		t.Errorf("after the operator's ask: %v, want the open ask %s and %s", left, open, s.ID)
	}
	if n := len(asks()); n != len(parked)-min(len(parked)-1, reclaimBatch)+1 {
		t.Errorf("after the operator's ask: %v, want every ended ask deleted (at most %d)", left, reclaimBatch)
	}
}

// The ended asks a full count makes room from go in the order they ended: an ask answered just
// now, though parked first, is kept while asks that ended before it go (its asker may not have
// read the answer yet). By the order they were parked, it went first (attack25).
func TestReclaimedAsksGoInTheOrderTheyEnded(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("reclaim-order")
	profile := strings.Replace(fleetProfile, "  maxConcurrent: 2\n", "", 1)
	profile = strings.Replace(profile, "      timeZone: Europe/Paris\n", "      timeZone: Europe/Paris\n      maxAsks: 12\n", 1)
	installProfile(t, c, ns, profile)
	ctx := context.Background()
	op, err := OpenRunner(ctx, runnerClient(t, c.Config), ns, "")
	if err != nil {
		t.Fatal(err)
	}
	var parked []string
	for len(parked) <= 40 {
		s, err := op.LaunchRef(ctx, "owner", "#1", ir.LaunchParams{"TOPIC": "x"})
		if err != nil {
			if !strings.Contains(err.Error(), "count/configmaps") {
				t.Fatalf("ask %d: %v, want refused by the quota (count/configmaps)", len(parked)+1, err)
			}
			break
		}
		parked = append(parked, s.ID)
	}
	if len(parked) <= reclaimBatch+1 {
		t.Fatalf("%d asks parked before the count refused one, want more than %d", len(parked), reclaimBatch+1)
	}
	for _, id := range parked[1:] {
		if ok, err := op.Cancel(ctx, id); !ok || err != nil {
			t.Fatalf("cancel %s: %v, %v", id, ok, err)
		}
	}
	tok, err := op.NewAskToken(ctx, parked[0])
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := op.Update(ctx, parked[0], ir.Patch{Status: ir.Done, Token: tok, Evidence: "https://example.com/approved"}); !ok || err != nil {
		t.Fatalf("resolve %s: %v, %v", parked[0], ok, err)
	}
	if _, err := op.LaunchRef(ctx, "owner", "#1", ir.LaunchParams{"TOPIC": "x"}); err != nil {
		t.Fatalf("the operator's ask at a count of ended asks: %v", err)
	}
	if _, found, err := op.Get(ctx, parked[0]); err != nil || !found {
		t.Errorf("the ask answered last was deleted (found %v, %v)", found, err)
	}
	for i, id := range parked[1 : 1+reclaimBatch] {
		if _, found, _ := op.Get(ctx, id); found {
			t.Errorf("the ask that ended %d-th is kept, want it reclaimed first", i+1)
		}
	}
}
