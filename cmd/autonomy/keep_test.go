package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/testfs"
)

// TestCompileKeepsTheUsersFile: installing sdlc into a repository with its own .gitignore is
// refused with the way out named; --keep keeps the user's file, and check agrees with --keep.
func TestCompileKeepsTheUsersFile(t *testing.T) {
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("node_modules/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prof := "../../profiles/sdlc"
	code, _, errOut := run(t, "compile", prof, "--target", "local", "--dir", repo)
	if code != 1 || !strings.Contains(errOut, "--keep .gitignore") || !strings.Contains(errOut, "nothing was written") {
		t.Fatalf("without --keep: exit %d\n%s", code, errOut)
	}
	code, out, errOut := run(t, "compile", prof, "--target", "local", "--dir", repo, "--keep", ".gitignore")
	if code != 0 || !strings.Contains(out, "kept "+filepath.ToSlash(filepath.Join(repo, ".gitignore"))) || !strings.Contains(errOut, ", 1 kept in ") {
		t.Fatalf("with --keep: exit %d\n%s%s", code, out, errOut)
	}
	if data, _ := os.ReadFile(filepath.Join(repo, ".gitignore")); string(data) != "node_modules/\n" {
		t.Errorf(".gitignore = %q, want the user's", data)
	}
	if code, out, errOut := run(t, "check", prof, "--target", "local", "--dir", repo, "--keep", ".gitignore"); code != 0 {
		t.Errorf("check --keep: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := run(t, "check", prof, "--target", "local", "--dir", repo); code != 1 || !strings.Contains(out, ".gitignore") {
		t.Errorf("check without --keep: exit %d, want the .gitignore drift\n%s", code, out)
	}
	if code, _, errOut := run(t, "compile", prof, "--target", "local", "--dir", repo, "--keep", "no/such/file"); code != 2 || !strings.Contains(errOut, `--keep "no/such/file"`) {
		t.Errorf("--keep of a file not written: exit %d\n%s", code, errOut)
	}
}

// TestKeepFromTheProfile: policy.box.autonomy.keep does what --keep does, for compile and check.
func TestKeepFromTheProfile(t *testing.T) {
	prof := copyProfile(t, "sdlc")
	yml := filepath.Join(prof, "ir.yml")
	data, err := os.ReadFile(yml)
	if err != nil {
		t.Fatal(err)
	}
	withKeep := strings.Replace(string(data), "    max_open_agent_prs: 3\n", "    max_open_agent_prs: 3\n    autonomy: { keep: [.gitignore] }\n", 1)
	if withKeep == string(data) {
		t.Fatal("the sdlc profile changed: no max_open_agent_prs line to add keep after")
	}
	if err := os.WriteFile(yml, []byte(withKeep), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("node_modules/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run(t, "compile", prof, "--target", "local", "--dir", repo); code != 0 || !strings.Contains(out, "kept ") {
		t.Fatalf("compile: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, "check", prof, "--target", "local", "--dir", repo); code != 0 {
		t.Errorf("check: exit %d\n%s%s", code, out, errOut)
	}
}

// TestCompileWarnsMissingDocuments: a documents.roles file that is not in the directory draws a
// warning naming the role's position, from compile and from check; once written, none.
func TestCompileWarnsMissingDocuments(t *testing.T) {
	repo := t.TempDir()
	code, _, errOut := run(t, "compile", "../../profiles/sdlc", "--target", "local", "--dir", repo)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		"ir.yml:120:13: warning: documents.roles.vision docs/VISION.md is not in " + repo,
		"documents.roles.constitution docs/CONSTITUTION.md is not in",
		"documents.roles.roadmap docs/ROADMAP.md is not in",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	code, out, errOut := run(t, "check", "../../profiles/sdlc", "--target", "local", "--dir", repo, "--format", "json")
	if code != 0 || !strings.Contains(errOut, "ir.yml:120:13: warning: documents.roles.vision docs/VISION.md is not in "+repo) ||
		!strings.Contains(out, `"documents.roles.roadmap docs/ROADMAP.md is not in `) {
		t.Errorf("check without the documents: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, doc := range []string{"VISION.md", "CONSTITUTION.md", "ROADMAP.md"} {
		if err := os.MkdirAll(filepath.Join(repo, "docs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "docs", doc), []byte("# "+doc+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errOut := run(t, "compile", "../../profiles/sdlc", "--target", "local", "--dir", repo); code != 0 || strings.Contains(errOut, "documents.roles") {
		t.Errorf("with the documents: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := run(t, "check", "../../profiles/sdlc", "--target", "local", "--dir", repo); code != 0 || strings.Contains(out+errOut, "documents.roles") {
		t.Errorf("check with the documents: exit %d\n%s%s", code, out, errOut)
	}
}

// TestCheckFromACopyIsClean: the headers do not name where the profile was compiled from, so a
// check from an identical copy elsewhere, under any folder name, finds no drift.
func TestCheckFromACopyIsClean(t *testing.T) {
	repo := t.TempDir()
	if code, _, errOut := run(t, "compile", "../../profiles/hello", "--target", "local", "--dir", repo); code != 0 {
		t.Fatalf("compile: exit %d\n%s", code, errOut)
	}
	for _, name := range []string{"hello", "renamed"} {
		cp := filepath.Join(t.TempDir(), "somewhere", name)
		testfs.CopyTree(t, "../../profiles/hello", cp)
		if code, out, errOut := run(t, "check", cp, "--target", "local", "--dir", repo); code != 0 {
			t.Errorf("check from %s: exit %d\n%s%s", cp, code, out, errOut)
		}
	}
}

// TestCompileWarnsOfARivalGate: a workflow of the repository's own that posts human-approval
// (the reference's gate, carried along) is a warning of compile and of check, at its line, and
// --strict refuses; removed, none.
func TestCompileWarnsOfARivalGate(t *testing.T) {
	repo := t.TempDir()
	rival := filepath.Join(repo, ".github", "workflows", "human-approval.yml")
	if err := os.MkdirAll(filepath.Dir(rival), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rival, []byte("on: [pull_request]\njobs:\n  gate:\n    steps:\n      - run: echo context=human-approval\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := rival + `:5:27: warning: this workflow is not autonomy's and names the status "human-approval"`
	code, _, errOut := run(t, "compile", "../../profiles/hello", "--target", "gh-actions", "--dir", repo)
	if code != 0 || !strings.Contains(errOut, want) {
		t.Fatalf("compile: exit %d, want 0 and %q in:\n%s", code, want, errOut)
	}
	if code, out, errOut := run(t, "check", "../../profiles/hello", "--target", "gh-actions", "--dir", repo, "--strict"); code == 0 || !strings.Contains(errOut+out, want) {
		t.Errorf("check --strict: exit %d, want refused with %q:\n%s%s", code, want, out, errOut)
	}
	if err := os.Remove(rival); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run(t, "check", "../../profiles/hello", "--target", "gh-actions", "--dir", repo); code != 0 || strings.Contains(out+errOut, "not autonomy's") {
		t.Errorf("check without it: exit %d\n%s%s", code, out, errOut)
	}
}
