package kubernetes

import (
	"bufio"
	"context"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/autonomyhq/autonomy/internal/k8stest"
	"github.com/autonomyhq/autonomy/ir"
)

// TestCronJobSessionIsListed: a CronJob built from the actor's template, as compile writes it,
// fires at the next minute boundary, and the session it started is listed with its actor and
// params (up to a minute of waiting: this test alone does it).
func TestCronJobSessionIsListed(t *testing.T) {
	cs, _ := ClusterClient(t)
	ns := ClusterNamespace(t, cs)
	pt := HeldPodTemplate(ns, "nightly_run")
	InstallTemplates(t, cs, pt)
	ctx := context.Background()
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: ObjectName("nightly_run"), Namespace: ns, Labels: ActorLabels(ns, "nightly_run")},
		Spec: batchv1.CronJobSpec{Schedule: "* * * * *", TimeZone: new(string),
			JobTemplate: WithParams(JobTemplate(pt), "", map[string]string{"P": "from cron"})},
	}
	*cj.Spec.TimeZone = "UTC"
	if _, err := cs.BatchV1().CronJobs(ns).Create(ctx, cj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(RunnerOptions{Client: RunnerClient(t), Namespace: ns, Actors: []RunnerActor{{Name: "nightly_run", Params: []string{"P"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []ir.Session
	Eventually(t, 100*time.Second, "the CronJob's session is listed", func() (bool, error) {
		got, err = r.List(ctx)
		return len(got) > 0, err
	})
	s := got[0]
	if s.Agent != "nightly_run" || s.Params["P"] != "from cron" || s.Status != ir.Running || !strings.HasPrefix(s.ID, cj.Name+"-") {
		t.Errorf("the fired session is %+v", s)
	}
	if g, ok, err := r.Get(ctx, s.ID); !ok || err != nil || g.Agent != "nightly_run" {
		t.Errorf("get %s: %+v %v %v", s.ID, g, ok, err)
	}
	// Its id is the Job's name, with no session label of the runner's: cancel treats it as a
	// launched one.
	if ok, err := r.Cancel(ctx, s.ID); !ok || err != nil {
		t.Errorf("cancel %s: %v %v", s.ID, ok, err)
	}
	if ss, err := r.List(ctx); err != nil || slices.ContainsFunc(ss, func(x ir.Session) bool { return x.ID == s.ID }) {
		t.Errorf("list after cancelling %s: %v %v", s.ID, ss, err)
	}
}

// PodLogEnv names the file kwok serves, following it, as every pod's log, for a cluster named
// by ClusterEnv; internal/k8stest's kwok serves its Cluster.PodLog.
const PodLogEnv = "AUTONOMY_K8S_POD_LOG"

// TestLogsFollow: logs -f streams the session pod's log as it is written.
func TestLogsFollow(t *testing.T) {
	logFile := os.Getenv(PodLogEnv)
	if logFile == "" && os.Getenv(ClusterEnv) != "" {
		t.Fatalf("%s names a cluster: set %s to the file its kwok serves as every pod's log, with follow: true in its ClusterLogs", ClusterEnv, PodLogEnv)
	}
	if logFile == "" {
		logFile = k8stest.Get(t).PodLog
	}
	cs, _ := ClusterClient(t)
	ns := ClusterNamespace(t, cs)
	InstallTemplates(t, cs, SessionPodTemplate(ns, "worker", nil))
	r, err := NewRunner(RunnerOptions{Client: RunnerClient(t), Namespace: ns, Actors: []RunnerActor{{Name: "worker"}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := r.Launch(ctx, "worker", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		// The rig registers its fake node with its addresses (internal/k8stest): the first
		// stream is the one that follows.
		done <- r.Logs(ctx, s.ID, true, pw)
		pw.Close()
	}()
	// The second line is written only once the first has arrived: it can only come through a
	// stream that follows the log.
	first, marker := "started-"+s.ID, "followed-"+s.ID
	appendLog(t, logFile, first)
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), first) {
			appendLog(t, logFile, marker)
		}
		if strings.Contains(sc.Text(), marker) {
			cancel()
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if err := <-done; err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
	if ctx.Err() == nil {
		t.Fatalf("the log ended without the line written after logs -f started: %v", sc.Err())
	}
}

// appendLog appends a line to kwok's pod log file, in the CRI format kwok reads.
func appendLog(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(time.Now().UTC().Format(time.RFC3339Nano) + " stdout F " + line + "\n"); err != nil {
		t.Fatal(err)
	}
}
