package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/conformance"
	"github.com/autonomyhq/autonomy/internal/fakesubstrate"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

// TestAddingASubstrate proves that adding a substrate is one package plus one registry line: the
// test-only fake substrate (internal/fakesubstrate), registered as the registry's list would,
// is a target profiles may declare; validate and compile read its own policy.box key; its own
// command is on the command line; catalog and schema list it; and conformance probes its runner
// and verifies its matrix, all with no file outside its package naming it. Not parallel: it changes the registry for its duration.
func TestAddingASubstrate(t *testing.T) {
	t.Cleanup(registry.Register(fakesubstrate.Substrate{}))
	profile := func(box string) string {
		dir := t.TempDir()
		yml := "schema: autonomy.ir.v1\ntargets: [fake]\nactors:\n  hello:\n    behavior: skills/hello\n    triggers: [{ dispatch: true }]\n    timeout: 5\npolicy:\n  box:\n    fake:\n" + box
		for name, data := range map[string]string{"ir.yml": yml, "skills/hello/SKILL.md": "# hello\n"} {
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}

	// validate runs fake's compile-time checks: a bad policy.box.fake is an error at its place.
	bad := profile("      zone: [eu]\n")
	if code, out, _ := run(t, "validate", bad); code != 1 || !strings.Contains(out, "ir.yml:11:13: policy.box.fake.zone must be a string") {
		t.Errorf("validate a bad policy.box.fake: exit %d\n%s", code, out)
	}
	good := profile("      zone: eu\n")
	if code, out, errOut := run(t, "validate", good); code != 0 {
		t.Errorf("validate: exit %d\n%s%s", code, out, errOut)
	}
	inst := t.TempDir()
	if code, _, errOut := run(t, "compile", good, "--dir", inst); code != 0 {
		t.Fatalf("compile: exit %d\n%s", code, errOut)
	}
	data, err := os.ReadFile(filepath.Join(inst, ".fake", "hello.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Actor, Zone string
		Timeout     int
	}
	if err := json.Unmarshal(data, &got); err != nil || got.Actor != "hello" || got.Zone != "eu" || got.Timeout != 5 {
		t.Errorf("compiled .fake/hello.json = %+v (%v)\n%s", got, err, data)
	}

	// The command only fake has is on the command line.
	if code, out, errOut := run(t, "fake-zone", good); code != 0 || out != "eu\n" {
		t.Errorf("fake-zone: exit %d, %q\n%s", code, out, errOut)
	}
	// runner dispatches on --target through the registry: fake's runner has no verbs here.
	if code, _, errOut := run(t, "runner", "--target", "fake", "list"); code != 2 || !strings.Contains(errOut, "--target fake: its runner has no verbs") {
		t.Errorf("runner --target fake: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := run(t, "runner", "--target", "nope", "list"); code != 2 || !strings.Contains(errOut, `--target "nope": one of gh-actions, local, kubernetes, fake`) {
		t.Errorf("runner --target nope: exit %d\n%s", code, errOut)
	}
	if code, out, _ := run(t, "catalog", "targets"); code != 0 || !strings.Contains(out, "\nfake ") {
		t.Errorf("catalog targets: exit %d\n%s", code, out)
	}
	var schema struct {
		Properties struct {
			Targets struct{ Items struct{ Enum []string } }
			Policy  struct {
				Properties struct {
					Box struct{ Properties map[string]map[string]any }
				}
			}
		}
	}
	_, out, _ := run(t, "schema")
	if err := json.Unmarshal([]byte(out), &schema); err != nil {
		t.Fatal(err)
	}
	if e := schema.Properties.Targets.Items.Enum; !strings.Contains(strings.Join(e, " "), "fake") {
		t.Errorf("schema targets %v lack fake", e)
	}
	if box := schema.Properties.Policy.Properties.Box.Properties["fake"]; box["properties"] == nil {
		t.Errorf("schema policy.box.fake = %v, want fake's declared section", box)
	}

	code, out, errOut := run(t, "conformance", "--target", "fake", "--format", "json")
	var rep conformance.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("conformance --target fake: exit %d, %v\n%s", code, err, errOut)
	}
	core := 0
	for _, r := range rep.Results {
		if r.Target != "fake memory" {
			t.Errorf("result of %s", r.Target)
		}
		if r.Tier == conformance.Core && r.Outcome == conformance.Pass {
			core++
		}
	}
	cells := 0
	for _, c := range rep.Matrix {
		if c.Substrate == fakesubstrate.Name && c.Verified {
			cells++
		}
	}
	if core != 6 || cells != len(conformance.Features()) {
		t.Errorf("conformance probed fake's runner with %d core checks passed, verified %d of %d matrix cells", core, cells, len(conformance.Features()))
	}
}
