package ghactions

import (
	"io"
	"os"
	"regexp"
	"testing"

	"github.com/rhysd/actionlint"
)

// TestReleaseWorkflow: the project's own release workflow passes actionlint (with shellcheck)
// and pins every action to a full commit SHA with its version in a comment, as the generated
// workflows do.
func TestReleaseWorkflow(t *testing.T) {
	shellcheck := shellcheckPath(t)
	defer skipShellcheck(t, shellcheck)
	const path = "../../.github/workflows/release.yml"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{Shellcheck: shellcheck})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint(path, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("%s:%d:%d: %s [%s]", path, e.Line, e.Column, e.Message, e.Kind)
	}
	uses := regexp.MustCompile(`(?m)^\s*(?:-\s+)?uses:\s*(\S+)(.*)$`)
	pinned := regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)
	found := uses.FindAllStringSubmatch(string(data), -1)
	if len(found) == 0 {
		t.Fatal("no action found: the check checks nothing")
	}
	for _, m := range found {
		if !pinned.MatchString(m[1]) || !regexp.MustCompile(`^\s*# v\d`).MatchString(m[2]) {
			t.Errorf("%s: %s%s is not pinned to a commit with its version in a comment", path, m[1], m[2])
		}
	}
}
