package kubernetes

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/autonomyhq/autonomy/internal/kubeclient"
)

// TestClaimsFromTheFutureHoldNoSlot: a claim in the slots ConfigMap holds a slot only while it is
// fresh. The admission policy admits any well-formed time, so a claim dated in 2999 (written
// with a session's own ServiceAccount) once held its slot forever, and maxConcurrent of them
// refused every launch, the operator's too. A claim a little ahead (the launchers' clocks
// differ) still counts.
func TestClaimsFromTheFutureHoldNoSlot(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, at string
		refused  bool
	}{
		{"forged in 2999", "2999-01-01T00:00:00Z", false},
		{"an hour ahead", now.Add(time.Hour).Format(time.RFC3339Nano), false},
		{"a second ahead (clock skew)", now.Add(time.Second).Format(time.RFC3339Nano), true},
		{"a minute ago (a launch creating its Job)", now.Add(-time.Minute).Format(time.RFC3339Nano), true},
		{"lapsed", now.Add(-claimGrace).Format(time.RFC3339Nano), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slots := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: SlotsConfigMap, Namespace: "fleet", ResourceVersion: "1"}, Data: map[string]string{"1-forged": tc.at}}
			r := &Runner{opts: RunnerOptions{Client: slotsServer(t, slots), Namespace: "fleet", MaxConcurrent: 1, Now: func() time.Time { return now }}}
			done, err := r.tryClaim(context.Background(), "2-real")
			if tc.refused {
				if err == nil || !strings.Contains(err.Error(), "maxConcurrent is 1") {
					t.Fatalf("claim beside a claim made at %s: done %v, err %v; want refused at capacity", tc.at, done, err)
				}
				return
			}
			if err != nil || !done {
				t.Fatalf("claim beside a claim made at %s: done %v, err %v; want the slot", tc.at, done, err)
			}
			cm, err := r.opts.Client.CoreV1().ConfigMaps("fleet").Get(context.Background(), SlotsConfigMap, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, kept := cm.Data["1-forged"]; kept || cm.Data["2-real"] == "" {
				t.Errorf("slots after the claim: %v, want only 2-real", cm.Data)
			}
		})
	}
}

// slotsServer is an API server holding the slots ConfigMap and no Job, as the API server answers
// (JSON; an update with a stale resourceVersion is a conflict), and the runner's client of it.
func slotsServer(t *testing.T, slots *corev1.ConfigMap) *kubeclient.Client {
	t.Helper()
	const cmPath = "/api/v1/namespaces/fleet/configmaps/" + SlotsConfigMap
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case req.Method == http.MethodGet && req.URL.Path == cmPath:
			json.NewEncoder(w).Encode(slots)
		case req.Method == http.MethodGet && req.URL.Path == "/apis/batch/v1/namespaces/fleet/jobs":
			io.WriteString(w, `{"kind":"JobList","apiVersion":"batch/v1","metadata":{},"items":[]}`)
		case req.Method == http.MethodPut && req.URL.Path == cmPath:
			var cm corev1.ConfigMap
			if err := json.NewDecoder(req.Body).Decode(&cm); err != nil || cm.ResourceVersion != slots.ResourceVersion {
				w.WriteHeader(http.StatusConflict)
				io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409}`)
				return
			}
			cm.ResourceVersion += "1"
			slots = &cm
			json.NewEncoder(w).Encode(slots)
		default:
			t.Errorf("unexpected request %s %s", req.Method, req.URL)
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := kubeclient.NewForConfig(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
