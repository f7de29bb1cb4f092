//go:build unix

package effect_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// scriptFleet is a profile of two script actors: sweeper, whose result (written where
// AUTONOMY_RESULT says) depends on the PROBE_TEXT it is dispatched with, and legacy, which opts
// out (result: { schema: none }) and writes none.
func scriptFleet(t *testing.T) *fleet {
	dir := t.TempDir()
	files := map[string]string{
		"ir.yml": `schema: autonomy.ir.v1
targets: [gh-actions]
actors:
  sweeper:
    behavior: scripts/sweep.sh
    capabilities: [tasks:converse]
    triggers:
      - dispatch: true
        params: { PROBE_TEXT: subject.text }
  legacy:
    behavior: scripts/legacy.sh
    result: { schema: none }
    triggers: [{ dispatch: true }]
`,
		"scripts/sweep.sh": `#!/bin/sh
set -eu
case "$PROBE_TEXT" in
valid) printf '{"status":"done","summary":"Swept."}\n' > "$AUTONOMY_RESULT" ;;
failed) printf '{"status":"failed","summary":"Nothing could be swept."}\n' > "$AUTONOMY_RESULT" ;;
invalid) printf '{"status":"finished"}\n' > "$AUTONOMY_RESULT" ;;
forged)
	printf '{"status":"done","summary":"Swept."}\n' > "$AUTONOMY_RESULT"
	printf '{"tool":"comment","actor":"sweeper"}\n' > "$RUNNER_TEMP/autonomy-outputs/outputs.jsonl" ;;
esac
`,
		"scripts/legacy.sh": "#!/bin/sh\necho swept\n",
	}
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return newFleetFrom(t, dir, nil, "")
}

// TestScriptRunIsDoneOnlyWithAResult: done is verified for a script too. Through the generated
// workflow, a script that exits 0 without a result, with one that does not validate, or with one
// that says failed has its run failed by its apply job (contents: read only, no model), naming
// why; with a valid result the apply job passes; anything the script wrote as a safe output is
// dropped (its effects are its own job's). A script that opts out (result: { schema: none }) has
// no apply job: its exit status alone is its run's.
func TestScriptRunIsDoneOnlyWithAResult(t *testing.T) {
	f := scriptFleet(t)
	for i, c := range []struct {
		text, want string // want "" for a run the apply job passes
	}{
		{"none", "the session delivered no result, so the run is not done"},
		{"invalid", "the session's result is invalid, so the run is not done"},
		{"failed", "the agent reported its work failed: Nothing could be swept."},
		{"valid", ""},
		{"forged", ""},
	} {
		v := f.values(nil, "workflow_dispatch", map[string]string{"PROBE_TEXT": c.text})
		v["github.run_id"] = strconv.Itoa(8000 + i)
		if out, ran := f.r.job(f.wf("sweeper"), "agent", v, false); !ran {
			t.Fatalf("%s: the script's job was skipped\n%s", c.text, out)
		}
		out, ran := f.r.job(f.wf("sweeper"), "apply", v, c.want != "")
		if !ran {
			t.Fatalf("%s: the apply job was skipped", c.text)
		}
		if c.want != "" && !strings.Contains(out, c.want) {
			t.Errorf("%s: the apply job failed without %q:\n%s", c.text, c.want, out)
		}
		if c.text == "forged" {
			data, err := os.ReadFile(filepath.Join(f.r.artifacts[v["github.run_id"]+"/autonomy-outputs"], "outputs.jsonl"))
			if err != nil || len(data) != 0 {
				t.Errorf("the script's safe outputs reached the apply job: %q %v", data, err)
			}
		}
	}
	if perms := jobsOf(t, f.wf("sweeper"))["apply"].Permissions; len(perms) != 1 || perms["contents"] != "read" {
		t.Errorf("the script's apply job holds %v, want contents: read only", perms)
	}
	v := f.values(nil, "workflow_dispatch", nil)
	v["github.run_id"] = "8100"
	if out, ran := f.r.job(f.wf("legacy"), "agent", v, false); !ran {
		t.Fatalf("legacy was skipped\n%s", out)
	}
	if _, ok := jobsOf(t, f.wf("legacy"))["apply"]; ok {
		t.Error("a script that opts out of a result has an apply job")
	}
}

// jobsOf parses the jobs of the workflow at path, with their permissions.
func jobsOf(t *testing.T, path string) map[string]struct{ Permissions map[string]string } {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct{ Permissions map[string]string }
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return wf.Jobs
}
