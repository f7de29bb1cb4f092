package ghrun_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
)

// head starts a profile that targets gh-actions; the actors follow.
const head = "schema: autonomy.ir.v1\ntargets: [gh-actions]\nactors:\n"

// compileOK compiles the profile irYML (with a skills/a behavior) for gh-actions, or fails t.
func compileOK(t *testing.T, irYML string) substrates.Output {
	t.Helper()
	dir := t.TempDir()
	skill := filepath.Join(dir, "skills", "a", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skill), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, []byte("# a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ir.yml"), []byte(irYML), 0o644); err != nil {
		t.Fatal(err)
	}
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("profile invalid: %v\n%s", err, diags)
	}
	r, _ := playbook.Resolve(p)
	out, err := ghactions.Substrate{}.Compile(r)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return out
}

// file is the content of the output's file at path, or fails t.
func file(t *testing.T, out substrates.Output, path string) string {
	t.Helper()
	for _, f := range out.Files {
		if f.Path == path {
			return string(f.Data)
		}
	}
	t.Fatalf("no file %s in the output", path)
	return ""
}
