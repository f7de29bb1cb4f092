package kubernetes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/autonomyhq/autonomy/substrates"
)

// TestReadInstallationIsWhatCompileWrote: the objects ReadInstallation reads from the directory a
// compile wrote are the compile's, in its order; it reads nothing the kustomization lists
// outside DIR/kubernetes, and says where an installation comes from when there is none.
func TestReadInstallationIsWhatCompileWrote(t *testing.T) {
	out, err := compileFleet(t, writeFleet(t, fleetProfile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := substrates.Write(dir, &out, substrates.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	want, err := Objects(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadInstallation(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d objects, compiled %d", len(got), len(want))
	}
	for i := range want {
		g, _ := got[i].MarshalJSON()
		w, _ := want[i].MarshalJSON()
		if string(g) != string(w) {
			t.Errorf("object %d: read %s %s, compiled %s %s", i, got[i].GetKind(), got[i].GetName(), want[i].GetKind(), want[i].GetName())
		}
	}
	k := filepath.Join(dir, filepath.FromSlash(Kustomization))
	data, err := os.ReadFile(k)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"../ir.yml", "/etc/hostname", "actors/../../x.yaml"} {
		if err := os.WriteFile(k, []byte(strings.Replace(string(data), "- namespace.yaml", "- "+bad, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadInstallation(dir); err == nil || !strings.Contains(err.Error(), "not a file under") {
			t.Errorf("a kustomization listing %s: %v", bad, err)
		}
	}
	if _, err := ReadInstallation(t.TempDir()); err == nil || !strings.Contains(err.Error(), "autonomy compile PROFILE --target kubernetes --dir") {
		t.Errorf("no installation: %v", err)
	}
}

// TestWholeCompileRefusesAPartOrAnEditedCompile: the objects of a compile are a whole compile,
// of the hash its Namespace carries; its Namespace alone, the compile without an agent's objects,
// with an object edited, or without the hash (an older autonomy's) is refused, saying to
// compile again.
func TestWholeCompileRefusesAPartOrAnEditedCompile(t *testing.T) {
	objs := compiledObjects(t, writeFleet(t, fleetProfile))
	ns := ""
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			ns = o.GetName()
		}
	}
	hash, err := wholeCompile(objs, ns)
	if err != nil || !strings.HasPrefix(hash, "sha256:") || len(hash) != len("sha256:")+64 {
		t.Fatalf("the compile: %q, %v", hash, err)
	}
	var onlyNS, noAgent []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			onlyNS = append(onlyNS, o)
		}
		if o.GetName() != ObjectName("writer") && o.GetName() != LaunchPolicyName(ns, ObjectName("writer")) {
			noAgent = append(noAgent, o)
		}
	}
	if len(noAgent) == len(objs) {
		t.Fatal("the fleet has no agent writer")
	}
	edited := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		edited[i] = o.DeepCopy()
		if o.GetKind() == "ConfigMap" && o.GetName() == ConfigMapFleet {
			edited[i].SetLabels(map[string]string{"edited": "yes"})
		}
	}
	unhashed := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		unhashed[i] = o.DeepCopy()
		if o.GetKind() == "Namespace" {
			unhashed[i].SetAnnotations(nil)
		}
	}
	for name, c := range map[string]struct {
		objs []*unstructured.Unstructured
		want string
	}{
		"the namespace alone": {onlyNS, "not a whole compile"},
		"an agent dropped":    {noAgent, "a file was edited, dropped or added"},
		"an object edited":    {edited, "a file was edited, dropped or added"},
		"no hash":             {unhashed, "carries no " + AnnotationCompile},
	} {
		if _, err := wholeCompile(c.objs, ns); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "compile again") {
			t.Errorf("%s: %v; want %q and to compile again", name, err, c.want)
		}
	}
}
