package kubernetes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
