package kubernetes

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestCheckResult: a result is accepted only as JSON satisfying the contract, and under the
// 4096 bytes the kubelet keeps of a termination message.
func TestCheckResult(t *testing.T) {
	for _, c := range []struct{ msg, want string }{
		{`{"verdict":"approve"}`, ""},
		{`{"verdict":"maybe"}`, "does not satisfy the actor's result contract"},
		{`{"verdict":"approve","extra":1}`, "does not satisfy"},
		{`{"verdict":`, "not JSON"},
		{`{"verdict":"approve","n":1e99999999}`, "its result cannot be checked: the number 1e99999999 (at byte 26) is too large to check exactly"},
		{`{"verdict":"approve"}` + strings.Repeat(" ", MaxResultBytes), "4096 bytes or more"},
		// What is validated is what is read: a key written twice, or a case twin, is refused.
		{`{"verdict":"approve","verdict":"maybe"}`, `key "verdict" in the top-level object is written twice`},
		{`{"verdict":"approve","Verdict":"maybe"}`, `key "Verdict" in the top-level object differs from "verdict" only in case`},
	} {
		got := checkResult(verdictSchema, c.msg)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("checkResult(%.30q) = %q, want %q", c.msg, got, c.want)
		}
	}
	if why := checkResult(map[string]any{"$ref": "https://example.com/s.json"}, `{}`); !strings.Contains(why, "may not reference another document") {
		t.Errorf("a schema reaching out: %q", why)
	}
}

// TestTakeSubmittedReadsExactKeys: a submit_result whose "status" says failed fails the session
// whatever a "Status" beside it says, and one whose output has a case twin is refused, not picked.
func TestTakeSubmittedReadsExactKeys(t *testing.T) {
	for doc, want := range map[string]string{
		`{"status":"failed","summary":"gave up","Status":"done"}`:           `key "Status" in the top-level object differs from "status" only in case`,
		`{"status":"done","summary":"x","output":{"v":1},"OUTPUT":{"v":2}}`: `key "OUTPUT" in the top-level object`,
		`{"status":"done","summary":"x","output":{"v":1,"v":2}}`:            `key "v" in /output is written twice`,
		`{"STATUS":"failed","status":"failed","summary":"gave up"}`:         `key "status" in the top-level object differs from "STATUS" only in case`,
	} {
		s := &agentSession{cfg: &ActorConfig{Result: resultsDir + "/w.json"}, work: t.TempDir()}
		if err := os.WriteFile(s.path("submitted.json"), []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := s.takeSubmitted(); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "write each key once") {
			t.Errorf("%s: %v, want a refusal with %q", doc, err, want)
		}
	}
}

// TestConnectWithoutACluster: with no kubeconfig anywhere and no pod, the error says where it
// looked; a kubeconfig that does not exist is named.
func TestConnectWithoutACluster(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	_, _, err := Connect{}.Client()
	if err == nil || !strings.Contains(err.Error(), "no cluster: no kubeconfig was found (give --kubeconfig, or set KUBECONFIG") {
		t.Errorf("no config: %v", err)
	}
	missing := filepath.Join(home, "nope.yaml")
	if _, _, err := (Connect{Kubeconfig: missing}).Client(); err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("a missing kubeconfig: %v", err)
	}
	cfg := filepath.Join(home, "config")
	os.WriteFile(cfg, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: https://127.0.0.1:1}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"), 0o600)
	_, ns, err := Connect{Kubeconfig: cfg}.Client()
	if err != nil || ns != DefaultNamespace {
		t.Errorf("a context without a namespace: %q %v, want %s", ns, err, DefaultNamespace)
	}
	if _, ns, _ := (Connect{Kubeconfig: cfg, Namespace: "team-a"}).Client(); ns != "team-a" {
		t.Errorf("--namespace team-a gave %q", ns)
	}
}

// TestNewRunnerChecksItsOptions: options that cannot work are refused at once, every problem
// named.
func TestNewRunnerChecksItsOptions(t *testing.T) {
	_, err := NewRunner(RunnerOptions{Namespace: "Bad_NS", MaxConcurrent: -1, Actors: []RunnerActor{{Name: "a"}, {Name: "a"}}})
	for _, want := range []string{"no client", `namespace "Bad_NS"`, "cannot be negative", `actor "a" is named twice`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

// TestQuotaRefusalIsRefused: a Job the namespace's ResourceQuota refuses (the API server's
// Forbidden "exceeded quota", as the Job controller sees it for a pod past TestQuotaBoundsRunningPods' quota) is a launch refused for capacity
// (exit 1, saying to wait), not a denial of the caller's identity.
func TestQuotaRefusalIsRefused(t *testing.T) {
	r := &Runner{opts: RunnerOptions{Namespace: "fleet"}}
	quota := apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "s-1",
		errors.New("exceeded quota: autonomy-sessions, requested: pods=1, used: pods=4, limited: pods=4"))
	var refused *RefusedError
	if err := r.apiError("launching worker", "create jobs", quota); !errors.As(err, &refused) || !strings.Contains(err.Error(), QuotaName) {
		t.Errorf("a quota refusal: %v, want refused naming %s", err, QuotaName)
	}
	var denied *DeniedError
	rbac := apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "s-1", errors.New("cannot create resource"))
	if err := r.apiError("launching worker", "create jobs", rbac); !errors.As(err, &denied) {
		t.Errorf("an RBAC refusal: %v, want denied", err)
	}
}
