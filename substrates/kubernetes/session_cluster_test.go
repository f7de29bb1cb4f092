package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/autonomyhq/autonomy/internal/k8stest"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// TestEntryPointResultMakesTheSessionDone: a session the runner launches from the compiled
// PodTemplate runs through kwok; its Job's container, run as a process, writes the termination
// message, which the test (playing the kubelet) copies into the pod's status: the session is
// done with the result the script wrote, and failed when the entry point wrote its reason.
func TestEntryPointResultMakesTheSessionDone(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a script behavior runs with sh")
	}
	cs, _ := ClusterClient(t)
	ns := namespace("entry")
	objs := compiledSessionFleet(t, ns)
	apply(t, k8stest.Get(t).Config, objs) // the whole fleet: the session's ServiceAccount, its ConfigMaps
	r, err := OpenRunner(context.Background(), RunnerClient(t), ns, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for mode, want := range map[string]ir.SessionStatus{"ok": ir.Done, "invalid": ir.Failed} {
		t.Run(mode, func(t *testing.T) {
			s, err := r.LaunchRef(ctx, "worker_1", "", ir.LaunchParams{"MODE": mode, "VERDICT": "approve"})
			if err != nil {
				t.Fatal(err)
			}
			code, msg := runJobPod(t, objs, mustJob(t, cs, ns, s.ID))
			if (code == 0) != (want == ir.Done) {
				t.Fatalf("the entry point exited %d: %q", code, msg)
			}
			writeResult(t, cs, sessionPod(t, cs, ns, s.ID), msg)
			got, ok, err := r.Get(ctx, s.ID)
			if err != nil || !ok || got.Status != want {
				t.Fatalf("session with termination message %q: %+v %v %v, want %s", msg, got, ok, err, want)
			}
			// A failed session says why, in get's text and JSON (newc11: it showed only its status).
			var text strings.Builder
			substrates.PrintSession(&text, got)
			if data, _ := json.Marshal(got); (want == ir.Failed) != (got.Reason != "" && strings.Contains(text.String(), "reason:") && strings.Contains(string(data), `"reason":`)) {
				t.Errorf("get of a %s session: %+v\n%s\n%s", want, got, text.String(), data)
			}
		})
	}
}

// TestSkillToolsActAsThePodsServiceAccount: the tools of a skill's MCP server, called directly
// (as a process that skips the server's own check would), act through the runner as the
// session's actor with its ServiceAccount: triage (agent:launch@worker_1, agent:list) launches
// worker_1 and lists it, and is refused a launch of boss and a cancel (it holds no
// agent:cancel); a code-host tool is refused as unsupported on this target.
func TestSkillToolsActAsThePodsServiceAccount(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("tools")
	// Without the person: an agent:list ServiceAccount may not list the asks' ConfigMaps, which
	// the runner's list reads when the fleet has a person (the asks' RBAC is not this test's).
	profile := strings.NewReplacer("namespace: fleet-a", "namespace: "+ns,
		"  owner:\n    kind: human\n    behavior: humans/ask.md\n    triggers: [{ dispatch: true, params: { TOPIC: subject.text } }]\n", "").Replace(fleetProfile)
	if strings.Contains(profile, "kind: human") {
		t.Fatal("fleetProfile's person is no longer written as this test removes it")
	}
	objs := compiledObjects(t, writeFleet(t, profile))
	apply(t, c.Config, objs)
	// In triage's pod: its installation mounted as its PodTemplate mounts it.
	var pt corev1.PodTemplate
	if err := object(objs, "PodTemplate", "triage", &pt); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	mountVolume(t, objs, pt.Template.Spec.Volumes, root)
	t.Setenv(EnvDir, root)
	t.Setenv(EnvSession, "s-00000000000000ab")
	fc := &ActorConfig{Actor: "triage", Capabilities: []string{"agent:launch@worker_1", "agent:list"}}
	h := &podHands{call: &sessionCall{env: []string{EnvParams + "={}"}, id: "s-00000000000000ab", actor: "triage"}, cfg: fc,
		open: func(ctx context.Context) (*Runner, error) {
			return OpenRunner(ctx, runnerClient(t, asConfig(c.Config, ns, "triage")), ns, "triage")
		}}
	ctx := context.Background()
	got, err := h.Apply(ctx, tools.Effect{Tool: tools.Launch}, &tools.LaunchInput{Actor: "worker_1", Params: map[string]string{"MODE": "ok"}})
	if err != nil {
		t.Fatal(err)
	}
	id := got.(map[string]any)["session"].(string)
	if _, err := kubernetes.NewForConfigOrDie(c.Config).BatchV1().Jobs(ns).Get(ctx, id, metav1.GetOptions{}); err != nil {
		t.Fatalf("the launched session's Job: %v", err)
	}
	list, err := h.Read(ctx, tools.ListSessions, &tools.SessionQuery{Actor: "worker_1"})
	if err != nil || !strings.Contains(fmt.Sprint(list), id) {
		t.Errorf("list_sessions: %v %v, want %s", list, err, id)
	}
	for _, tc := range []struct {
		e    tools.Effect
		in   tools.Input
		want string
	}{
		{tools.Effect{Tool: tools.Launch}, &tools.LaunchInput{Actor: "boss"}, "denied"},
		{tools.Effect{Tool: tools.CancelSession}, &tools.SessionRef{Session: id}, "denied"},
		{tools.Effect{Tool: tools.Comment}, &tools.CommentInput{Item: "1", Body: "hi"}, "not supported on the kubernetes target"},
	} {
		if _, err := h.Apply(ctx, tc.e, tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.e.Tool, err, tc.want)
		}
	}
	if _, err := kubernetes.NewForConfigOrDie(c.Config).BatchV1().Jobs(ns).Get(ctx, id, metav1.GetOptions{}); err != nil {
		t.Errorf("the session was cancelled: %v", err)
	}
}

// TestModelProxyPodIsAdmitted: in the fleet's namespace, which enforces the restricted Pod
// Security Standard, the model proxy's Deployment gets its pod created and started (kwok plays
// the kubelet), with the Secret the user creates: its pod template complies.
func TestModelProxyPodIsAdmitted(t *testing.T) {
	c := k8stest.Get(t)
	cs := kubernetes.NewForConfigOrDie(c.Config)
	ns := namespace("proxy")
	install(t, c.Config, ns)
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "model-key", Namespace: ns}, StringData: map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test"}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sel := LabelComponent + "=" + ComponentModelProxy
	Eventually(t, 60*time.Second, "the model proxy's pod runs", func() (bool, error) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, err
		}
		return len(pods.Items) == 1 && pods.Items[0].Status.Phase == corev1.PodRunning, nil
	})
	rs, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil || len(rs.Items) != 1 {
		t.Fatalf("the proxy's ReplicaSets: %v %v", rs, err)
	}
	for _, cond := range rs.Items[0].Status.Conditions {
		if cond.Type == "ReplicaFailure" && cond.Status == corev1.ConditionTrue {
			t.Errorf("the proxy's pod was refused: %s", cond.Message)
		}
	}
}
