package ghactions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/substrates"
)

// A workflow autonomy did not write that posts one of the statuses its gate requires (the
// reference's human-approval gate, carried along in a migration) is a warning at the line naming
// it: GitHub takes the status from either writer. Autonomy's own workflows, other workflows, a
// longer name holding the status's, a symbolic link and a file over 1 MiB are not.
func TestRivalWorkflowsAreWarned(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, ".github", "workflows")
	if err := os.MkdirAll(wf, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"human-approval.yml": "name: gate\non: [pull_request]\njobs:\n  gate:\n    steps:\n      - run: bun scripts/human-approval-gate.ts --context human-approval\n",
		"review-bot.yaml":    "jobs:\n  x:\n    steps:\n      - run: gh api repos/o/r/statuses/sha -f context=agent-review -f state=success\n",
		"ci.yml":             "name: ci\njobs:\n  test:\n    steps:\n      - run: make test # human-approval-gate.ts is elsewhere\n",
		"develop.yml":        "# autonomy's own\ncontext: agent-review\n",
		"big.yml":            "context: human-approval\n" + strings.Repeat("#\n", maxRivalRead),
		"notes.txt":          "human-approval\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(wf, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(wf, "human-approval.yml"), filepath.Join(wf, "linked.yml")); err != nil {
		t.Fatal(err)
	}
	out := &substrates.Output{Files: []substrates.File{{Path: ".github/workflows/develop.yml"}}}
	got := Substrate{}.Rivals(dir, out).String()
	for _, want := range []string{
		filepath.Join(dir, ".github/workflows/human-approval.yml") + `:6:59: warning: this workflow is not autonomy's and names the status "human-approval", which autonomy's human gate (the engage and review jobs) posts`,
		filepath.Join(dir, ".github/workflows/review-bot.yaml") + `:4:55: warning: this workflow is not autonomy's and names the status "agent-review", which autonomy's review job posts`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	for _, not := range []string{"ci.yml", "develop.yml", "notes.txt"} {
		if strings.Contains(got, not) {
			t.Errorf("%s warned of:\n%s", not, got)
		}
	}
	// What it does not read it says it did not.
	for _, unread := range []string{"big.yml:1:1: warning: this workflow is not autonomy's and was not read", "linked.yml:1:1: warning: this workflow is not autonomy's and was not read for a status its gate requires: it is not a regular file"} {
		if !strings.Contains(got, unread) {
			t.Errorf("no %q in:\n%s", unread, got)
		}
	}
	if n := strings.Count(got, "warning:"); n != 4 {
		t.Errorf("%d warnings, want 4:\n%s", n, got)
	}
}
