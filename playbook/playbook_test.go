package playbook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/playbook/internal/casetest"
	"github.com/autonomyhq/autonomy/playbook/overlay"
)

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		name, data string
		want       Format
		sure       bool
	}{
		{"a.md", "---\nschema: playbooks/v1\n---\nx", Overlay, true},
		{"a.md", "---\nschema: 'playbooks/v1'\n---\nx", Overlay, true},
		{"a.md", "---\ntype: playbook\n---\n", Capsule, true},
		{"a.playbook.md", "---\ntitle: x\n---\n", Capsule, true},
		{"a.playbook.md", "# T\n\n## Intent\n", Capsule, true},
		{"a.playbook.md", "# T\n\n## STEP 1: go\n", Steps, true},
		{"a.md", "# T\n\n## STEP 1: go\n", Steps, true},
		{"a.md", "# T\n\ntext\n", Steps, false},
		{"a.md", "---\nname: skill\n---\n# T\n", Unknown, false},
		{"a.yml", "name: x\nsteps: []\n", Workflow, true},
		{"a.json", `{"name": "x", "steps": []}`, Workflow, true},
		{"a.yaml", "key: value\n", Workflow, false},
		{"_index.md", "# Playbooks\n", Unknown, false},
		{"a.txt", "## STEP 1: x", Unknown, false},
		{"a.md", "---\nschema: playbooks/v1\n", Overlay, true},
	} {
		got, sure := Detect(c.name, []byte(c.data))
		if got != c.want || sure != c.sure {
			t.Errorf("Detect(%q, %q) = %q, %v; want %q, %v", c.name, c.data, got, sure, c.want, c.sure)
		}
	}
}

// TestValidateTree validates a directory holding every format: the files Detect is sure of are
// read, hidden folders and guesses are skipped, the overlay package's stale index and the
// capsule library's broken references are found. testdata/tree.out pins the result.
func TestValidateTree(t *testing.T) {
	res := ValidatePaths([]string{"testdata/tree"})
	if len(res.Failures) > 0 {
		t.Fatal(res.Failures)
	}
	var b strings.Builder
	for _, f := range res.Files {
		b.WriteString(string(f.Format) + " " + f.Path + "\n")
	}
	b.WriteString("--\n" + res.Diagnostics.String())
	casetest.Compare(t, "testdata/tree.out", b.String())
}

func TestValidateExplicitAndMissing(t *testing.T) {
	res := ValidatePaths([]string{"testdata/tree/README.md", "testdata/tree/flows/config.yml", "testdata/nope", "testdata/tree/overlays/tone-block.md"})
	if len(res.Failures) != 1 || res.Failures[0].Path != "testdata/nope" || res.Failures[0].Error != "no such file or directory" {
		t.Errorf("failures %+v", res.Failures)
	}
	// README.md, named explicitly, is read as the step playbook it might be: no step. config.yml
	// is read as a workflow. The overlay named alone is not held to a package's index.
	got := res.Diagnostics.String()
	for _, want := range []string{
		"testdata/tree/README.md:1:1: the playbook has no step",
		"testdata/tree/flows/config.yml:1:1: unknown key \"key\" in the workflow",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, overlay.IndexFile) {
		t.Errorf("a lone overlay is checked against an index:\n%s", got)
	}
}

func TestMain(m *testing.M) {
	// The tree's stale index is the point of the case; make sure nobody regenerated it.
	if data, _ := os.ReadFile(filepath.Join("testdata", "tree", "overlays", overlay.IndexFile)); string(data) != "stale\n" {
		panic("testdata/tree/overlays/_index.md must stay stale")
	}
	os.Exit(m.Run())
}

// TestWalkEdges: a symbolic link in a walked folder is reported and not followed (its target may
// be outside), and a file over MaxFileSize is refused unread.
func TestWalkEdges(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.yml")
	os.WriteFile(outside, []byte("name: x\nsteps: [{id: a, command: cli cat /etc/shadow}]\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "linked.yml")); err != nil {
		t.Skip("no symlinks here")
	}
	big := filepath.Join(dir, "big.md")
	f, _ := os.Create(big)
	f.Truncate(MaxFileSize + 1)
	f.Close()
	res := ValidatePaths([]string{dir, big})
	got := res.Diagnostics.String()
	for _, want := range []string{
		filepath.Join(dir, "linked.yml") + ":1:1: warning: a symbolic link is not followed",
		big + ":1:1: the file is 16777217 bytes: too large for a playbook",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	for _, f := range res.Files {
		if strings.HasSuffix(f.Path, "linked.yml") {
			t.Errorf("the link was read: %+v", f)
		}
	}
}
