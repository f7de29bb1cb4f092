package substrates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/playbook"
)

// TestIndexDrift: a profile's overlay package without its _index.md is a missing file for check,
// a stale one a changed file with the diff, an index as generated no drift; the path is relative
// to the directory check compares, and a profile without a package has no index to drift.
func TestIndexDrift(t *testing.T) {
	overlay, err := os.ReadFile("../playbook/overlay/testdata/good/tone-block.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	prof := filepath.Join(dir, "fleet")
	writeFile(t, prof, "ir.yml", "schema: autonomy.ir.v1\ntargets: [fake]\nactors:\n  support:\n    behavior: skills/support\n    triggers: [{ dispatch: true }]\n", 0o644)
	writeFile(t, prof, "skills/support/SKILL.md", "# support\n", 0o644)
	load := func() *resolved.Profile {
		t.Helper()
		p, diags, err := ir.Check(prof)
		if err != nil || p == nil {
			t.Fatalf("%v %s", err, diags)
		}
		r, _ := playbook.Resolve(p)
		return r
	}
	if d := IndexDrift(load(), dir); d != nil {
		t.Errorf("no overlay package: %+v", d)
	}
	writeFile(t, prof, "playbooks/calmer-tone.md", string(overlay), 0o644)
	d := IndexDrift(load(), dir)
	if len(d) != 1 || d[0].Kind != Missing || d[0].Path != "fleet/playbooks/_index.md" {
		t.Fatalf("no index: %+v", d)
	}
	writeFile(t, prof, "playbooks/_index.md", "stale\n", 0o644)
	d = IndexDrift(load(), dir)
	if len(d) != 1 || d[0].Kind != Changed || !strings.Contains(d[0].Diff, "-stale") || !strings.Contains(d[0].Diff, "calmer-tone") {
		t.Fatalf("a stale index: %+v", d)
	}
	// The index as generated is the diff's new side; written so, nothing drifts.
	var want []string
	for _, line := range strings.Split(d[0].Diff, "\n") {
		if strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++") {
			want = append(want, line[1:])
		}
	}
	writeFile(t, prof, "playbooks/_index.md", strings.Join(want, "\n")+"\n", 0o644)
	if d := IndexDrift(load(), dir); d != nil {
		t.Errorf("a fresh index: %+v", d)
	}
}
