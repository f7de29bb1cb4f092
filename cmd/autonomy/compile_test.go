//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/testfs"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

func TestCompileThenCheck(t *testing.T) {
	prof := copyProfile(t, "sdlc")
	repo := filepath.Join(t.TempDir(), "repo") // created by compile
	code, out, errOut := run(t, "compile", prof, "--target", "gh-actions", "--out", repo)
	if code != 0 {
		t.Fatalf("compile: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"create " + filepath.ToSlash(repo) + "/.github/workflows/develop.yml\n", "create " + filepath.ToSlash(repo) + "/.gitignore\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "gh-actions: 23 created, 0 updated, 0 deleted, 0 unchanged in "+repo) {
		t.Errorf("stderr: %s", errOut)
	}

	// Clean.
	if code, out, errOut := run(t, "check", prof, "--target", "gh-actions", "--dir", repo); code != 0 || out != "" {
		t.Fatalf("check after compile: exit %d\n%s\n%s", code, out, errOut)
	}
	// A second compile changes nothing.
	if code, out, errOut := run(t, "compile", prof, "--target", "gh-actions", "--out", repo); code != 0 || out != "" || !strings.Contains(errOut, "0 created, 0 updated, 0 deleted, 23 unchanged") {
		t.Fatalf("recompile: exit %d\n%s\n%s", code, out, errOut)
	}

	// A hand edit: exit 1, a diff naming the file and the line.
	wf := filepath.Join(repo, ".github/workflows/pm.yml")
	data, _ := os.ReadFile(wf)
	edited := strings.Replace(string(data), "timeout-minutes: 15", "timeout-minutes: 99", 1)
	if edited == string(data) {
		t.Fatal("pm.yml has no timeout-minutes: 15")
	}
	os.WriteFile(wf, []byte(edited), 0o644)
	code, out, errOut = run(t, "check", prof, "--target", "gh-actions", "--dir", repo)
	if code != 1 {
		t.Fatalf("check after a hand edit: exit %d\n%s", code, out)
	}
	// The summary says what to do (newc8: it named the drift and no fix).
	if !strings.Contains(errOut, "1 file drifted from ") || !strings.Contains(errOut, "run autonomy compile "+prof+" --target gh-actions --dir "+repo) || !strings.Contains(errOut, "--force") {
		t.Errorf("check's summary:\n%s", errOut)
	}
	for _, want := range []string{
		filepath.ToSlash(repo) + "/.github/workflows/pm.yml: changed",
		"--- .github/workflows/pm.yml (on disk)\n+++ .github/workflows/pm.yml (compiled)\n@@ -",
		"\n-    timeout-minutes: 99\n+    timeout-minutes: 15\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	// compile refuses to overwrite the hand edit, writes nothing, and --force overwrites it.
	code, _, errOut = run(t, "compile", prof, "--target", "gh-actions", "--out", repo)
	if code != 1 || !strings.Contains(errOut, "pm.yml: edited by hand") {
		t.Fatalf("compile over a hand edit: exit %d\n%s", code, errOut)
	}
	if got, _ := os.ReadFile(wf); string(got) != edited {
		t.Fatal("compile overwrote a hand-edited file")
	}
	if code, _, errOut := run(t, "compile", prof, "--target", "gh-actions", "--out", repo, "--force"); code != 0 {
		t.Fatalf("compile --force: exit %d\n%s", code, errOut)
	}

	// Remove an actor: its workflow is stale until the next compile deletes it.
	irPath := filepath.Join(prof, "ir.yml")
	src, _ := os.ReadFile(irPath)
	without := removeActor(t, string(src), "draft")
	os.WriteFile(irPath, []byte(without), 0o644)
	code, out, _ = run(t, "check", prof, "--target", "gh-actions", "--dir", repo)
	if code != 1 || !strings.Contains(out, filepath.ToSlash(repo)+"/.github/workflows/draft.yml: stale") {
		t.Fatalf("check after removing an actor: exit %d\n%s", code, out)
	}
	code, out, errOut = run(t, "compile", prof, "--target", "gh-actions", "--out", repo)
	if code != 0 || !strings.Contains(out, "delete "+filepath.ToSlash(repo)+"/.github/workflows/draft.yml") {
		t.Fatalf("compile after removing an actor: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(repo, ".github/workflows/draft.yml")); !os.IsNotExist(err) {
		t.Fatalf("stale workflow still there: %v", err)
	}
	if code, out, errOut := run(t, "check", prof, "--target", "gh-actions", "--dir", repo); code != 0 {
		t.Fatalf("check after recompile: exit %d\n%s\n%s", code, out, errOut)
	}
}

// removeActor deletes an actor's block (its key line and the more-indented lines after it).
func removeActor(t *testing.T, src, name string) string {
	t.Helper()
	lines := strings.SplitAfter(src, "\n")
	var out []string
	skipping := false
	for _, l := range lines {
		if l == "  "+name+":\n" {
			skipping = true
			continue
		}
		if skipping && (strings.HasPrefix(l, "    ") || strings.TrimSpace(l) == "") {
			continue
		}
		skipping = false
		out = append(out, l)
	}
	res := strings.Join(out, "")
	if res == src {
		t.Fatalf("no actor %s", name)
	}
	return res
}

func TestCompileDryRunWritesNothing(t *testing.T) {
	repo := t.TempDir()
	code, out, errOut := run(t, "compile", "../../profiles/hello", "--target", "gh-actions", "--out", repo, "--dry-run")
	if code != 0 || !strings.Contains(out, "would create "+filepath.ToSlash(repo)+"/.github/workflows/greeter.yml") || !strings.Contains(errOut, "dry run, nothing written") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if entries, _ := os.ReadDir(repo); len(entries) != 0 {
		t.Fatalf("dry run wrote %d entries", len(entries))
	}
}

func TestCompileTargetChoice(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"compile", "../../profiles/sdlc", "--dry-run"}, 2, "declares 2 targets (gh-actions, local): pass --target"},
		{[]string{"compile", "../../profiles/sdlc", "--target", "gitlab", "--dry-run"}, 2, `unknown target "gitlab"`},
		{[]string{"compile", "../../profiles/sdlc", "--target", "local", "--dry-run"}, 0, "dry run, nothing written: local: 25 created"},
		{[]string{"compile", "../../profiles/sdlc", "--target", "github", "--dry-run"}, 0, `target "github" is a deprecated alias; write "gh-actions"`},
		{[]string{"check", "../../profiles/sdlc"}, 2, "pass --target"},
		{[]string{"compile", "../../profiles/hello", "--target", "k8s", "--dry-run"}, 0, "dry run, nothing written: kubernetes:"},
		{[]string{"compile", "../../profiles/nope", "--target", "gh-actions"}, 2, "nope"},
	}
	for _, c := range cases {
		code, _, errOut := run(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s", c.args, code, c.code, c.want, errOut)
		}
	}
}

func TestCompileUndeclaredTargetWarns(t *testing.T) {
	prof := copyProfile(t, "hello")
	irPath := filepath.Join(prof, "ir.yml")
	src, _ := os.ReadFile(irPath)
	os.WriteFile(irPath, []byte(strings.Replace(string(src), "targets: [gh-actions, local]", "targets: [local]", 1)), 0o644)
	code, _, errOut := run(t, "compile", prof, "--target", "gh-actions", "--out", t.TempDir())
	if code != 0 || !strings.Contains(errOut, `warning: the profile does not declare target "gh-actions"`) {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	// At the targets it declares.
	if at := boxLine(t, irPath, "targets"); !strings.Contains(errOut, fmt.Sprintf("ir.yml:%d:1: warning: the profile does not declare", at)) {
		t.Errorf("not at targets (line %d):\n%s", at, errOut)
	}
}

func TestCompileInvalidProfileWritesNothing(t *testing.T) {
	prof := copyProfile(t, "sdlc")
	irPath := filepath.Join(prof, "ir.yml")
	src, _ := os.ReadFile(irPath)
	os.WriteFile(irPath, []byte(strings.Replace(string(src), "[code:propose, tasks:converse]", "[code:proposal, tasks:converse]", 1)), 0o644)
	repo := t.TempDir()
	code, _, errOut := run(t, "compile", prof, "--target", "gh-actions", "--out", repo)
	if code != 1 || !strings.Contains(errOut, `unknown capability "code:proposal" (did you mean "code:propose"?)`) {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if entries, _ := os.ReadDir(repo); len(entries) != 0 {
		t.Fatal("an invalid profile wrote files")
	}
}

func TestCompileBadBoxIsPositioned(t *testing.T) {
	prof := copyProfile(t, "hello")
	irPath := filepath.Join(prof, "ir.yml")
	src, _ := os.ReadFile(irPath)
	bad := strings.Replace(string(src), "gh-actions: { model: gpt-5-codex }", "gh-actions: { model: gpt-5-codex, trustedRoles: [NONE] }", 1)
	if bad == string(src) {
		t.Fatal("hello has no gh-actions box")
	}
	os.WriteFile(irPath, []byte(bad), 0o644)
	code, _, errOut := run(t, "compile", prof, "--target", "gh-actions", "--out", t.TempDir())
	if code != 1 || !strings.Contains(errOut, `ir.yml:`) || !strings.Contains(errOut, `policy.box.gh-actions.trustedRoles: "NONE" is not a trusted role`) {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
}

func TestCompileDryRunIntoMissingDir(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "not", "yet")
	code, out, errOut := run(t, "compile", "../../profiles/hello", "--target", "gh-actions", "--out", repo, "--dry-run")
	if code != 0 || !strings.Contains(out, "would create "+filepath.ToSlash(repo)+"/.github/workflows/greeter.yml") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(repo); !os.IsNotExist(err) {
		t.Fatal("dry run created the directory")
	}
}

// TestCompileBothTargetsIntoOneDir: each target has its own manifest, so both install side by
// side; files both generate with the same bytes (the skills) are shared, and each target checks
// clean.
func TestCompileBothTargetsIntoOneDir(t *testing.T) {
	repo := t.TempDir()
	for _, target := range append(registry.Names(), registry.Names()...) {
		if code, _, errOut := run(t, "compile", "../../profiles/sdlc", "--target", target, "--out", repo); code != 0 {
			t.Fatalf("compile --target %s: exit %d\n%s", target, code, errOut)
		}
	}
	for _, target := range registry.Names() {
		code, out, errOut := run(t, "check", "../../profiles/sdlc", "--target", target, "--dir", repo)
		if code != 0 {
			t.Errorf("check --target %s: exit %d\n%s%s", target, code, out, errOut)
		}
	}
	for _, m := range []string{".autonomy/gh-actions/manifest.json", ".autonomy/local/manifest.json"} {
		if _, err := os.Stat(filepath.Join(repo, m)); err != nil {
			t.Error(err)
		}
	}
}

// TestShortTargetNameIsNotDeprecated: k8s is a plain other name of kubernetes, compiled without
// a warning; github, a deprecated alias of gh-actions, stays warned.
func TestShortTargetNameIsNotDeprecated(t *testing.T) {
	code, _, errOut := run(t, "compile", "../../profiles/hello", "--target", "k8s", "--dry-run")
	if code != 0 || strings.Contains(errOut, "alias") || !strings.Contains(errOut, "dry run, nothing written: kubernetes:") {
		t.Errorf("--target k8s: exit %d\n%s", code, errOut)
	}
	prof := copyProfile(t, "hello")
	irPath := filepath.Join(prof, "ir.yml")
	src, _ := os.ReadFile(irPath)
	os.WriteFile(irPath, []byte(strings.Replace(string(src), "targets: [gh-actions, local, kubernetes]", "targets: [gh-actions, local, k8s]", 1)), 0o644)
	if code, _, errOut := run(t, "validate", prof); code != 0 || strings.Contains(errOut, "alias") {
		t.Errorf("targets: [.., k8s]: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := run(t, "compile", "../../profiles/sdlc", "--target", "github", "--dry-run"); code != 0 || !strings.Contains(errOut, "deprecated alias") {
		t.Errorf("--target github: exit %d, want the deprecation warning\n%s", code, errOut)
	}
}

// check, run where compile would warn that GitHub never reads the workflows (inside the
// profile's folder of a repository), warns the same, naming the repository's root (newc10: it
// only said to compile there, which installs a second copy).
func TestCheckWarnsOfAPlaceGitHubDoesNotRead(t *testing.T) {
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	prof := filepath.Join(repo, "autonomy")
	testfs.CopyTree(t, "../../profiles/hello", prof)
	code, _, errOut := run(t, "check", prof, "--target", "gh-actions", "--dir", prof)
	if code != 1 || !strings.Contains(errOut, "GitHub runs only the workflows of "+filepath.Join(repo, ".github", "workflows")) || !strings.Contains(errOut, "compile with --dir "+repo) {
		t.Errorf("check inside the profile's folder: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := run(t, "check", prof, "--target", "gh-actions", "--dir", repo); strings.Contains(errOut, "GitHub runs only") {
		t.Errorf("check at the repository's root: exit %d\n%s", code, errOut)
	}
}
