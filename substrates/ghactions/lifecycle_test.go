package ghactions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook"
)

// lifecycleCapsule is a capsule playbook at status, with extra frontmatter lines and a marker
// in its intent.
func lifecycleCapsule(trigger, status, extra, marker string) string {
	return "---\ntype: playbook\ntitle: Handle " + trigger + "\nversion: \"1.0\"\nstatus: " + status + "\n" + extra +
		"owner: team\nreaders: [agent]\nscope: single-session\ntags: [test]\ntrigger: " + trigger +
		"\ncreated: 2026-05-20\nlocked_by: lead\nlocked_at: 2026-05-22\n---\n\n## Intent\n\n" + marker +
		"\n\n## Rules\n\n- The agent MUST write its result.\n\n## Steps\n\n1. Do the work.\n2. Write the result.\n\n## Outcomes\n\n- [REQUIRED] the result is written\n\n## Verification\n\nmethod: self-attestation\n"
}

// Seed 000 on gh-actions: a superseded capsule behavior's runs follow its successor (installed;
// AUTONOMY_BEHAVIOR and the manifest point at it; a step says so); an archived one's agent job
// only refuses, saying why, and exits 1.
func TestCapsuleLifecycleWorkflows(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"ir.yml": head + "  old:\n    behavior: pb/old.playbook.md\n    triggers: [{ dispatch: true }]\n" +
			"  gone:\n    behavior: pb/gone.playbook.md\n    triggers: [{ dispatch: true }]\n",
		"pb/old.playbook.md":        lifecycleCapsule("old-asked", "superseded", "superseded_by: ../playbooks/new.playbook.md\n", "OLD"),
		"playbooks/new.playbook.md": lifecycleCapsule("new-asked", "active", "supersedes: ../pb/old.playbook.md\n", "NEW"),
		"pb/gone.playbook.md":       lifecycleCapsule("gone-asked", "archived", "", "GONE"),
	}
	for name, content := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v\n%s", err, diags)
	}
	r, pd := playbook.Resolve(p)
	if pd.HasErrors() {
		t.Fatalf("the playbooks: %s", pd)
	}
	out, err := Substrate{}.Compile(r)
	if err != nil {
		t.Fatal(err)
	}
	if outputFile(out, dataDir+"/playbooks/new.playbook.md") == nil {
		t.Fatal("the successor is not installed")
	}
	parse := func(actor string) pbJob {
		var wf pbWorkflow
		if err := yaml.Unmarshal(outputFile(out, WorkflowPath(actor)), &wf); err != nil {
			t.Fatal(err)
		}
		return wf.Jobs["agent"]
	}
	old := parse("old")
	if got := old.Env["AUTONOMY_BEHAVIOR"]; got != dataDir+"/playbooks/new.playbook.md" {
		t.Errorf("the superseded behavior's AUTONOMY_BEHAVIOR is %q", got)
	}
	if len(old.Steps) == 0 || !strings.Contains(old.Steps[0].Env["AUTONOMY_LIFECYCLE"], "this run follows its successor playbooks/new.playbook.md (pb/old.playbook.md → playbooks/new.playbook.md)") {
		t.Errorf("no step says the run follows the successor: %+v", old.Steps)
	}
	if m := string(outputFile(out, ManifestPath)); !strings.Contains(m, `"behavior": ".autonomy/playbooks/new.playbook.md"`) {
		t.Errorf("the manifest does not point old at the successor:\n%s", m)
	}

	gone := parse("gone")
	if len(gone.Steps) != 1 || gone.Steps[0].Name != "Refuse: the behavior is archived" {
		t.Fatalf("the archived behavior's job runs %+v, want only the refusal", gone.Steps)
	}
	res := runJobSteps(t, pbJob{Steps: gone.Steps}, t.TempDir(), []string{"PATH=" + os.Getenv("PATH")}, nil)
	if len(res) != 1 || res[0].code != 1 || !strings.Contains(res[0].stdout, `::error::autonomy: actor "gone": its behavior pb/gone.playbook.md is archived (status: archived at `) {
		t.Fatalf("the refusal step: %+v", res)
	}
	if !strings.Contains(out.Warnings.String(), `actor "gone": its behavior pb/gone.playbook.md is archived`) {
		t.Errorf("no warning for the archived behavior:\n%s", out.Warnings)
	}
}
