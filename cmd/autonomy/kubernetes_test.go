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
)

// kubeFake is an API server holding, beside the policies and bindings every installation's
// compile writes, a stale policy and binding of the fleet (autonomy-NAMESPACE-sessions, a former
// name): KUBECONFIG names it. deleted lists what was deleted, as kind/name?uid.
type kubeFake struct {
	mu      sync.Mutex
	deleted []string
}

func kubePruneFake(t *testing.T) *kubeFake {
	t.Helper()
	f := &kubeFake{}
	const base = "/apis/admissionregistration.k8s.io/v1"
	kinds := map[string]string{"validatingadmissionpolicies": "ValidatingAdmissionPolicy", "validatingadmissionpolicybindings": "ValidatingAdmissionPolicyBinding"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == base {
			var list []map[string]any
			for res, kind := range kinds {
				list = append(list, map[string]any{"name": res, "namespaced": false, "kind": kind, "verbs": []string{"get", "list", "delete"}})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "admissionregistration.k8s.io/v1", "resources": list})
			return
		}
		res, name, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, base+"/"), "/")
		if _, ok := kinds[res]; !ok {
			http.NotFound(w, r)
			return
		}
		switch {
		case r.Method == http.MethodGet && name == "":
			sel, err := labels.ConvertSelectorToLabelsMap(r.URL.Query().Get("labelSelector"))
			if err != nil {
				t.Errorf("list %s: %v", r.URL, err)
			}
			ns := sel["autonomy.dev/fleet"]
			_ = json.NewEncoder(w).Encode(map[string]any{"items": []any{map[string]any{"metadata": map[string]any{
				"name": "autonomy-" + ns + "-sessions", "uid": "uid-" + res, "labels": map[string]string(sel)}}}})
		case r.Method == http.MethodGet:
			_ = json.NewEncoder(w).Encode(map[string]any{"metadata": map[string]any{"name": name}})
		case r.Method == http.MethodDelete:
			var opts struct {
				Preconditions struct{ UID string } `json:"preconditions"`
			}
			_ = json.NewDecoder(r.Body).Decode(&opts)
			f.mu.Lock()
			f.deleted = append(f.deleted, kinds[res]+"/"+name+"?"+opts.Preconditions.UID)
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
	kubePruneFake(t)
}

// TestKubernetesPruneDeletesTheFleetsStaleObjects: autonomy kubernetes prune reads the
// installation in --dir, deletes the stale policy and binding the cluster lists under the fleet's
// labels (each with its uid as a precondition), and prints them; with no installation it exits 2
// saying how to make one.
func TestKubernetesPruneDeletesTheFleetsStaleObjects(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := run(t, "compile", "../../profiles/hello", "--target", "kubernetes", "--out", dir); code != 0 {
		t.Fatalf("compile: exit %d\n%s", code, errOut)
	}
	f := kubePruneFake(t)
	code, out, errOut := run(t, "kubernetes", "prune", "--dir", dir)
	if code != 0 || out != "deleted ValidatingAdmissionPolicyBinding autonomy-autonomy-sessions\ndeleted ValidatingAdmissionPolicy autonomy-autonomy-sessions\n" {
		t.Errorf("prune: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Join(f.deleted, " ") != "ValidatingAdmissionPolicyBinding/autonomy-autonomy-sessions?uid-validatingadmissionpolicybindings ValidatingAdmissionPolicy/autonomy-autonomy-sessions?uid-validatingadmissionpolicies" {
		t.Errorf("deleted %v", f.deleted)
	}
	if code, _, errOut := run(t, "kubernetes", "prune", "--dir", t.TempDir()); code != 2 || !strings.Contains(errOut, "no kubernetes installation in") {
		t.Errorf("no installation: exit %d\n%s", code, errOut)
	}
}
