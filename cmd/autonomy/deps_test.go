package main

import (
	"os/exec"
	"strings"
	"testing"
)

// heavyDeps are packages autonomy does not link, each with what to use instead: what they do at
// init, every autonomy process pays (a launch runs two).
var heavyDeps = []struct{ pkg, instead string }{
	// client-go's typed clientset and its discovery client register every Kubernetes API type at
	// init (a fifth of a launch's CPU).
	{"k8s.io/client-go/kubernetes", "use internal/kubeclient, whose scheme holds only the types it uses, built on first use"},
	{"k8s.io/client-go/discovery", "use internal/kubeclient"},
	{"k8s.io/client-go/restmapper", "use internal/kubeclient"},
	// client-go's dynamic client brings its feature gates and the CBOR and apply packages' init.
	{"k8s.io/client-go/dynamic", "use internal/kubeclient's Resource, which makes its requests"},
	// x/text/cases parses its languages' tags and builds their matcher at init.
	{"golang.org/x/text/cases", "fold case with mergecheck's caseFold (Unicode's full case folding, held equal to x/text's by TestCaseFoldIsXTextFold)"},
	// package testing (and its flag, runtime/trace and pprof graph) belongs in tests: a helper
	// that takes a testing.TB lives in a package of its own (internal/agentcli/agentclitest).
	{"testing", "move the test helper that imports it into a package only tests import"},
}

// TestLinksNoKubernetesClientset: the autonomy binary's dependencies (go list -deps, tests left
// out) hold none of heavyDeps.
func TestLinksNoKubernetesClientset(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/autonomyhq/autonomy/cmd/autonomy").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, h := range heavyDeps {
			if p == h.pkg || strings.HasPrefix(p, h.pkg+"/") {
				t.Errorf("autonomy links %s, whose init every autonomy process would run: %s", p, h.instead)
			}
		}
	}
}
