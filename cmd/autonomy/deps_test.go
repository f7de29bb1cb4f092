package main

import (
	"os/exec"
	"strings"
	"testing"
)

// heavyDeps are packages autonomy does not link: client-go's typed clientset and its discovery
// client register every Kubernetes API type at init, in every autonomy process (a fifth of a
// launch's CPU). The Kubernetes runner talks to the API server with internal/kubeclient.
var heavyDeps = []string{"k8s.io/client-go/kubernetes", "k8s.io/client-go/discovery", "k8s.io/client-go/restmapper"}

// TestLinksNoKubernetesClientset: the autonomy binary's dependencies (go list -deps, tests left
// out) hold none of heavyDeps.
func TestLinksNoKubernetesClientset(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/autonomyhq/autonomy/cmd/autonomy").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, h := range heavyDeps {
			if p == h || strings.HasPrefix(p, h+"/") {
				t.Errorf("autonomy links %s: use internal/kubeclient, whose scheme holds only the types it uses, built on first use", p)
			}
		}
	}
}
