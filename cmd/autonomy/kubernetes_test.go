//go:build unix

package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/autonomyhq/autonomy/substrates/kubernetes"
)

// kubeFake is an API server holding every object the installation's compile writes, and stale
// objects of the fleet: a policy and binding of a former name (autonomy-NAMESPACE-sessions) and
// the ServiceAccount of a dropped agent (dropped). KUBECONFIG names it. deleted lists what was
// deleted, as kind/name?uid. Its Namespace carries compile, the hash of the compile it holds
// (autonomy.dev/compile).
type kubeFake struct {
	mu      sync.Mutex
	deleted []string
	compile string
}

// fakeResource is one resource the fake serves: its kind, whether it is namespaced, and the
// name of its stale object of the fleet ("" for none).
type fakeResource struct {
	kind       string
	namespaced bool
	stale      func(ns string) string
}

// kubePruneFake serves the installation in dir, its Namespace carrying that compile's hash.
func kubePruneFake(t *testing.T, dir string) *kubeFake {
	t.Helper()
	objs, err := kubernetes.ReadInstallation(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := &kubeFake{}
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			f.compile = o.GetAnnotations()[kubernetes.AnnotationCompile]
		}
	}
	former := func(ns string) string { return "autonomy-" + ns + "-sessions" }
	dropped := func(string) string { return "dropped" }
	groups := map[string]map[string]fakeResource{
		"/api/v1": {"namespaces": {kind: "Namespace"}, "configmaps": {kind: "ConfigMap", namespaced: true}, "serviceaccounts": {kind: "ServiceAccount", namespaced: true, stale: dropped},
			"podtemplates": {kind: "PodTemplate", namespaced: true}, "services": {kind: "Service", namespaced: true}, "resourcequotas": {kind: "ResourceQuota", namespaced: true}},
		"/apis/batch/v1":                        {"cronjobs": {kind: "CronJob", namespaced: true}},
		"/apis/apps/v1":                         {"deployments": {kind: "Deployment", namespaced: true}},
		"/apis/rbac.authorization.k8s.io/v1":    {"roles": {kind: "Role", namespaced: true}, "rolebindings": {kind: "RoleBinding", namespaced: true}},
		"/apis/networking.k8s.io/v1":            {"networkpolicies": {kind: "NetworkPolicy", namespaced: true}},
		"/apis/admissionregistration.k8s.io/v1": {"validatingadmissionpolicies": {kind: "ValidatingAdmissionPolicy", stale: former}, "validatingadmissionpolicybindings": {kind: "ValidatingAdmissionPolicyBinding", stale: former}},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var base string
		for b := range groups {
			if r.URL.Path == b || strings.HasPrefix(r.URL.Path, b+"/") {
				base = b
			}
		}
		if base == "" {
			http.NotFound(w, r)
			return
		}
		kinds := groups[base]
		if r.URL.Path == base {
			var list []map[string]any
			for res, k := range kinds {
				list = append(list, map[string]any{"name": res, "namespaced": k.namespaced, "kind": k.kind, "verbs": []string{"get", "list", "delete"}})
			}
			gv := strings.TrimPrefix(strings.TrimPrefix(base, "/apis/"), "/api/")
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list})
			return
		}
		rest := strings.TrimPrefix(r.URL.Path, base+"/")
		onNS := ""
		if after, ok := strings.CutPrefix(rest, "namespaces/"); ok && strings.Contains(after, "/") {
			onNS, rest, _ = strings.Cut(after, "/")
		}
		res, name, _ := strings.Cut(rest, "/")
		k, ok := kinds[res]
		if !ok || k.namespaced != (onNS != "") {
			http.NotFound(w, r)
			return
		}
		switch {
		case r.Method == http.MethodGet && name == "":
			sel, err := labels.ConvertSelectorToLabelsMap(r.URL.Query().Get("labelSelector"))
			if err != nil {
				t.Errorf("list %s: %v", r.URL, err)
			}
			items := []any{}
			if ns := sel["autonomy.dev/fleet"]; k.stale != nil && (!k.namespaced || onNS == ns) {
				items = append(items, map[string]any{"metadata": map[string]any{
					"name": k.stale(ns), "namespace": onNS, "uid": "uid-" + res, "labels": map[string]string(sel)}})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"items": items})
		case r.Method == http.MethodGet:
			md := map[string]any{"name": name}
			if k.kind == "Namespace" {
				f.mu.Lock()
				md["annotations"] = map[string]string{kubernetes.AnnotationCompile: f.compile}
				f.mu.Unlock()
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"metadata": md})
		case r.Method == http.MethodDelete:
			var opts struct {
				Preconditions struct{ UID string } `json:"preconditions"`
			}
			_ = json.NewDecoder(r.Body).Decode(&opts)
			f.mu.Lock()
			f.deleted = append(f.deleted, k.kind+"/"+name+"?"+opts.Preconditions.UID)
			f.mu.Unlock()
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Success"})
		default:
			http.Error(w, "unexpected", http.StatusMethodNotAllowed)
		}
	}))
	t.Cleanup(srv.Close)
	cfg := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + srv.URL + "}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	return f
}

// kubePruneReady compiles hello for kubernetes into the example's --dir and serves the cluster
// its prune deletes from.
func kubePruneReady(t *testing.T, ex example) {
	t.Helper()
	dir := flagValue(ex.args, "--dir")
	if dir == "" {
		dir = "."
	}
	if code, _, errOut := run(t, "compile", "profiles/hello", "--target", "kubernetes", "--out", dir); code != 0 {
		t.Fatalf("setup compile: exit %d\n%s", code, errOut)
	}
	kubePruneFake(t, dir)
}

// TestKubernetesPruneDeletesTheFleetsStaleObjects: autonomy kubernetes prune reads the
// installation in --dir, deletes the stale policy and binding and the dropped agent's
// ServiceAccount the cluster lists under the fleet's labels (each with its uid as a
// precondition), and prints them, the namespaced one with its namespace; with no installation it exits 2
// saying how to make one.
func TestKubernetesPruneDeletesTheFleetsStaleObjects(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := run(t, "compile", "../../profiles/hello", "--target", "kubernetes", "--out", dir); code != 0 {
		t.Fatalf("compile: exit %d\n%s", code, errOut)
	}
	f := kubePruneFake(t, dir)
	// The cluster holds another compile (a later one): nothing is deleted, and prune says to
	// compile again and apply.
	f.compile = "sha256:" + strings.Repeat("0", 64)
	if code, out, errOut := run(t, "kubernetes", "prune", "--dir", dir); code != 2 || out != "" || !strings.Contains(errOut, "the cluster holds another compile than this folder's") || len(f.deleted) != 0 {
		t.Errorf("a prune of another compile than the cluster's: exit %d, deleted %v\n%s%s", code, f.deleted, out, errOut)
	}
	f = kubePruneFake(t, dir)
	code, out, errOut := run(t, "kubernetes", "prune", "--dir", dir)
	if code != 0 || out != "deleted ServiceAccount autonomy/dropped\ndeleted ValidatingAdmissionPolicyBinding autonomy-autonomy-sessions\ndeleted ValidatingAdmissionPolicy autonomy-autonomy-sessions\n" {
		t.Errorf("prune: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Join(f.deleted, " ") != "ServiceAccount/dropped?uid-serviceaccounts ValidatingAdmissionPolicyBinding/autonomy-autonomy-sessions?uid-validatingadmissionpolicybindings ValidatingAdmissionPolicy/autonomy-autonomy-sessions?uid-validatingadmissionpolicies" {
		t.Errorf("deleted %v", f.deleted)
	}
	if code, _, errOut := run(t, "kubernetes", "prune", "--dir", t.TempDir()); code != 2 || !strings.Contains(errOut, "no kubernetes installation in") {
		t.Errorf("no installation: exit %d\n%s", code, errOut)
	}
}
