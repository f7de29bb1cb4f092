package ghactions

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/testbin"
)

// TestWeaveStepRuns runs the librarian's generated weave step, its command and env read from the
// compiled workflow, with a real autonomy binary on a checkout of the installed files, and checks
// the woven skill the agent step reads and the step summary: priority order, the shadow overlay
// left out, an overlay breaking the persona lock skipped with its audit line.
func TestWeaveStepRuns(t *testing.T) {
	_, out := compileDir(t, "../../profiles/librarian")
	var wf struct {
		Jobs map[string]struct {
			Env   map[string]string
			Steps []struct {
				Name string
				Env  map[string]string
				Run  string
			}
		}
	}
	if err := yaml.Unmarshal([]byte(file(t, out, WorkflowPath("librarian"))), &wf); err != nil {
		t.Fatal(err)
	}
	job := wf.Jobs["agent"]
	weaveAt, runAt := -1, -1
	for i, s := range job.Steps {
		switch s.Name {
		case weaveStepName:
			weaveAt = i
		case "Run librarian":
			runAt = i
		}
	}
	if weaveAt < 0 || runAt != weaveAt+1 {
		t.Fatalf("weave step at %d, agent step at %d: want the weave right before the agent", weaveAt, runAt)
	}
	weave, run := job.Steps[weaveAt], job.Steps[runAt]
	if strings.Contains(weave.Run, "${{") {
		t.Fatalf("the weave script interpolates an expression:\n%s", weave.Run)
	}

	checkout := t.TempDir()
	for _, f := range out.Files {
		path := filepath.Join(checkout, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An active overlay replacing the tone block the persona locks (warmth): never woven.
	locked := `---
schema: playbooks/v1
slug: curt-tone
title: Answer curtly.
targets:
  - { kind: role, ref: role/librarian }
kind: block-replacement
block: tone
priority: 90
updated_at: 2026-06-01
evidence:
  - { kind: run, ref: session-1, note: answers were long }
status: active
---

Answer in as few words as you can.
`
	if err := os.WriteFile(filepath.Join(checkout, ".autonomy/playbooks/role/librarian/curt-tone.md"), []byte(locked), 0o644); err != nil {
		t.Fatal(err)
	}

	bin := testbin.Path(t)
	temp := t.TempDir()
	summary := filepath.Join(temp, "summary.md")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + temp, "RUNNER_TEMP=" + temp, "GITHUB_STEP_SUMMARY=" + summary, "AUTONOMY_BIN=" + bin}
	for k, v := range job.Env {
		env = append(env, k+"="+v)
	}
	for k, v := range weave.Env {
		env = append(env, k+"="+v)
	}
	cmd := exec.Command("bash", "-eo", "pipefail", "-c", weave.Run)
	cmd.Dir, cmd.Env = checkout, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("weave step: %v\n%s", err, stderr.String())
	}

	skillPath := strings.ReplaceAll(run.Env["AUTONOMY_BEHAVIOR"], "${{ runner.temp }}", temp)
	woven, err := os.ReadFile(skillPath)
	if err != nil {
		t.Fatalf("the agent step's skill (%s): %v", run.Env["AUTONOMY_BEHAVIOR"], err)
	}
	text := string(woven)
	flag := strings.Index(text, "When two pages disagree")
	cite := strings.Index(text, "with its page, inline") // inline-citations replaced the sources block
	if flag < 0 || cite < 0 || strings.Contains(text, "Point readers at the newer page") || strings.Contains(text, "as few words") {
		t.Errorf("woven skill:\n%s", text)
	}
	sum, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	s := string(sum)
	first := strings.Index(s, "1. `flag-contradictions-explicitly`")
	second := strings.Index(s, "2. `inline-citations`")
	if first < 0 || second < first || !strings.Contains(s, "skipped `curt-tone`") || strings.Contains(s, "1. `curt-tone`") {
		t.Errorf("step summary:\n%s", s)
	}
	if !strings.Contains(stderr.String(), "curt-tone") {
		t.Errorf("no audit line for the locked overlay:\n%s", stderr.String())
	}
	t.Logf("summary:\n%s\nstderr:\n%s", s, stderr.String())
}
