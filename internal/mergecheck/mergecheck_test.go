package mergecheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		glob, path string
		want       bool
	}{
		{".github/workflows/**", ".github/workflows/x.yml", true},
		{".github/workflows/**", ".github/workflows/a/b.yml", true},
		{".github/workflows/**", ".github/CODEOWNERS", false},
		{"**/migrations/**", "db/migrations/1.sql", true},
		{"**/migrations/**", "migrations/1.sql", true},
		{"docs/*.md", "docs/a.md", true},
		{"docs/*.md", "docs/x/a.md", false},
		{"docs/VISION.md", "docs/VISION.md", true},
		{"docs/VISION.md", "docs/VISIONxmd", false},
		// A line break is a character like any other (regexp's . alone would not match it).
		{".github/workflows/**", ".github/workflows/evil\n.yml", true},
		{"deploy/**", "deploy/prod\n.yml", true},
		{"**/migrations/**", "db/migrations/1\n.sql", true},
		{"docs/*.md", "docs/a\nb.md", true},
		// DIR/** matches the folder's own path: a file or a link put where it was.
		{"deploy/**", "deploy", true},
		{".github/workflows/**", ".github/workflows", true},
		{"**/migrations/**", "db/migrations", true},
		{"deploy/**", "deployment", false},
	} {
		if got := Match(c.glob, c.path); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.glob, c.path, got, c.want)
		}
	}
}

// repo is a git repository with one commit on main; run runs git in it.
func repo(t *testing.T) (string, func(args ...string) string) {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	write(t, dir, "README", "x\n")
	run("add", "-A")
	run("commit", "-qm", "init")
	return dir, run
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	full := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gitIn(dir string) Git {
	return func(args ...string) ([]byte, error) {
		return exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	}
}

// Changes reads every path a line of commits touches, and refuses merge commits, the
// workflows and the installation, and paths outside the scope.
func TestChanges(t *testing.T) {
	dir, run := repo(t)
	base := run("rev-parse", "HEAD")
	run("checkout", "-qb", "p")
	write(t, dir, "src/a.go", "package a\n")
	write(t, dir, ".github/workflows/x.yml", "on: push\n")
	run("add", "-A")
	run("commit", "-qm", "both")
	run("rm", "-q", ".github/workflows/x.yml")
	run("commit", "-qm", "revert the workflow")
	files, reason, bad, err := Changes(gitIn(dir), base, "HEAD", "develop", "")
	if err != nil || !strings.Contains(reason, "workflows") || len(bad) != 1 || bad[0] != ".github/workflows/x.yml" || files != nil && len(files) != 2 {
		t.Fatalf("a workflow edited then reverted: %v %q %v %v", files, reason, bad, err)
	}
	tip := run("rev-parse", "HEAD")
	write(t, dir, "src/b.go", "package a\n")
	run("add", "-A")
	run("commit", "-qm", "b")
	if _, reason, bad, _ := Changes(gitIn(dir), tip, "HEAD", "develop", "src/**"); reason != "" || bad != nil {
		t.Fatalf("a change inside the scope: %q %v", reason, bad)
	}
	write(t, dir, "docs/b.md", "b\n")
	run("add", "-A")
	run("commit", "-qm", "docs")
	if _, reason, bad, _ := Changes(gitIn(dir), tip, "HEAD", "develop", "src/**"); !strings.Contains(reason, "src/** only") || len(bad) != 1 || bad[0] != "docs/b.md" {
		t.Fatalf("a change outside the scope: %q %v", reason, bad)
	}
	run("checkout", "-q", "main")
	write(t, dir, "c", "c\n")
	run("add", "-A")
	run("commit", "-qm", "main moves")
	run("checkout", "-q", "p")
	run("merge", "-q", "--no-edit", "main")
	if _, reason, bad, _ := Changes(gitIn(dir), base, "HEAD", "develop", ""); !strings.Contains(reason, "merge commits") || len(bad) != 1 {
		t.Fatalf("a merge commit: %q %v", reason, bad)
	}
}
