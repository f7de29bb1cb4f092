package ir

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// writeProfile writes files (path → content) into a fresh profile directory.
func writeProfile(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		full := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const minimal = `schema: autonomy.ir.v1
targets: [local]
actors:
  hello:
    behavior: skills/hello
    triggers: [{ dispatch: true }]
`

func TestLoadDirectoryAndFile(t *testing.T) {
	dir := writeProfile(t, map[string]string{"ir.yml": minimal, "skills/hello/SKILL.md": "# hello\n"})
	for _, path := range []string{dir, filepath.Join(dir, "ir.yml")} {
		p, diags, err := Check(path)
		if err != nil || len(diags) != 0 {
			t.Fatalf("Check(%s) = %v, %v; want a clean profile", path, diags, err)
		}
		if p.File != filepath.Join(dir, "ir.yml") || p.Dir != dir {
			t.Errorf("File, Dir = %q, %q", p.File, p.Dir)
		}
		a := p.Actor("hello")
		if a == nil || !a.Skill || a.BehaviorFile != "skills/hello/SKILL.md" {
			t.Fatalf("actor hello = %+v; want a resolved skill", a)
		}
		if a.Triggers[0].Kind != Dispatch {
			t.Errorf("trigger kind = %q, want dispatch", a.Triggers[0].Kind)
		}
	}
}

func TestLoadIOErrors(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Load(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "no such profile") {
		t.Errorf("missing path: err = %v", err)
	}
	if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "has no ir.yml") {
		t.Errorf("directory without ir.yml: err = %v", err)
	}
}

func TestLoadRefusesLargeFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ir.yml")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: the size check must refuse it from its size, without reading it.
	if err := f.Truncate(MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	p, diags, err := Load(file)
	if err != nil || p != nil || len(diags) != 1 || !strings.Contains(diags[0].Message, "the limit is 33554432 (32.0 MiB)") {
		t.Fatalf("Load(33 MiB) = %v, %v, %v; want one size diagnostic", p, diags, err)
	}
}

func TestAliasBombIsRefusedQuickly(t *testing.T) {
	var b strings.Builder
	b.WriteString("schema: autonomy.ir.v1\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 30; i++ {
		b.WriteString("a")
		b.WriteString(strconv.Itoa(i))
		b.WriteString(": &a")
		b.WriteString(strconv.Itoa(i))
		b.WriteString(" [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + strconv.Itoa(i-1))
		}
		b.WriteString("]\n")
	}
	done := make(chan Diagnostics, 1)
	go func() { _, diags := Parse("bomb.yml", ".", []byte(b.String())); done <- diags }()
	select {
	case diags := <-done:
		if !strings.Contains(diags.String(), "expand to too many values") {
			t.Fatalf("diagnostics = %s; want the alias budget refusal", diags)
		}
	case <-time.After(20 * time.Second):
		// Not a timing assertion: 10^30 expansions never finish, so reaching this means no bound.
		t.Fatal("the alias bomb was not refused")
	}
}

func TestAliasesAndMergeKeys(t *testing.T) {
	src := `schema: autonomy.ir.v1
targets: [local]
x-defaults: &defaults
  behavior: skills/hello
  timeout: 5
  triggers: &dispatch [{ dispatch: true }]
actors:
  a:
    <<: *defaults
    timeout: 9
  b:
    <<: *defaults
    triggers: *dispatch
`
	// x-defaults is an extension key, free-form: the home of the anchor the actors merge.
	dir := writeProfile(t, map[string]string{"ir.yml": src, "skills/hello/SKILL.md": "hi"})
	p, diags, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(diags) != 0 {
		t.Fatalf("diagnostics = %s; want none", diags)
	}
	if a := p.Actor("a"); a.Timeout.Value != 9 || a.Behavior.Value != "skills/hello" {
		t.Errorf("a: timeout %d behavior %q; explicit keys must win over merged ones", a.Timeout.Value, a.Behavior.Value)
	}
	if b := p.Actor("b"); b.Timeout.Value != 5 || len(b.Triggers) != 1 || b.Triggers[0].Kind != Dispatch {
		t.Errorf("b = %+v; want the merged defaults", b)
	}
}

func TestDeterministicDiagnostics(t *testing.T) {
	src := "schema: x\ntargets: [nope, local]\nactors:\n  B:\n    behavior: /abs\n    triggers: []\n  c:\n    behavior: skills/none\n    triggers: [{ cron: \"99 * * * *\" }]\n"
	dir := writeProfile(t, map[string]string{"ir.yml": src})
	_, first, _ := Check(dir)
	for i := 0; i < 20; i++ {
		_, again, _ := Check(dir)
		if again.String() != first.String() {
			t.Fatalf("run %d differs:\n%s\nvs\n%s", i, again, first)
		}
	}
	if first.Errors() < 6 {
		t.Fatalf("want every problem reported, got:\n%s", first)
	}
}

// TestResourceFiles: Validate resolves each resource to where it is installed and which file of
// the profile holds it; a dotfile may be stored without its dot.
func TestResourceFiles(t *testing.T) {
	dir := writeProfile(t, map[string]string{
		"ir.yml":                minimal + "resources: [docs, .gitignore, docs/a.md]\n",
		"skills/hello/SKILL.md": "# hello\n",
		"docs/a.md":             "a\n",
		"gitignore":             "bin/\n",
	})
	p, diags, err := Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v %s", err, diags)
	}
	want := []ResourceFile{
		{Path: "docs", Source: "docs", Dir: true},
		{Path: ".gitignore", Source: "gitignore"},
		{Path: "docs/a.md", Source: "docs/a.md"},
	}
	if len(p.ResourceFiles) != len(want) {
		t.Fatalf("got %+v", p.ResourceFiles)
	}
	for i, w := range want {
		g := p.ResourceFiles[i]
		if g.Path != w.Path || g.Source != w.Source || g.Dir != w.Dir || !g.Pos.IsSet() {
			t.Errorf("resource %d: got %+v, want %+v", i, g, w)
		}
	}
}

// A profile path that is a typo of one beside it (a folder holding ir.yml, or a YAML file) names
// it; nothing close, or a folder without a profile, names nothing.
func TestLoadMissingNamesTheProfileNearby(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"autonomy", "scratch"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(dir, "autonomy", ProfileFile), filepath.Join(dir, "fleet.yml")} {
		if err := os.WriteFile(f, []byte("schema: autonomy.ir.v1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "autonomyy"):  "(did you mean " + filepath.Join(dir, "autonomy") + "? give",
		filepath.Join(dir, "fleet.yaml"): "(did you mean " + filepath.Join(dir, "fleet.yml") + "? give",
		filepath.Join(dir, "scratc"):     ": no such profile (give",
		filepath.Join(dir, "elsewhere"):  ": no such profile (give",
	} {
		if _, _, err := Load(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s) = %v, want %q", path, err, want)
		}
	}
}

// A human-required path that would protect nothing it seems to (a character class, a negation,
// a backslash, an empty glob) is an error at its entry, naming the fix (attack30: "[Ss]ecrets/**"
// passed validate and protected nothing); the globs Protects reads pass.
func TestHumanRequiredPathsProtectWhatTheySeemTo(t *testing.T) {
	dir := writeProfile(t, map[string]string{"skills/hello/SKILL.md": "# hello\n", "ir.yml": minimal + `policy:
  box:
    risk:
      human_required_paths:
        - "[Ss]ecrets/**"
        - "!docs/public/**"
        - 'docs\VISION.md'
        - ""
        - "*.{pem,key}"
        - /SECURITY.md
        - docs/
        - "**/migrations/**"
        - "*.pem"
`})
	_, diags, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := diags.String()
	for _, want := range []string{
		`ir.yml:11:11: human_required_paths entry "[Ss]ecrets/**" protects nothing it seems to: a character class`,
		`ir.yml:12:11: human_required_paths entry "!docs/public/**" protects nothing it seems to: a negation`,
		`ir.yml:13:11: human_required_paths entry "docs\\VISION.md" protects nothing it seems to: a backslash`,
		`ir.yml:14:11: an entry of policy.box.risk.human_required_paths is empty`,
		`ir.yml:15:11: human_required_paths entry "*.{pem,key}" protects nothing it seems to: a brace list`,
		"matching ignores case",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "protects nothing"); n != 4 {
		t.Errorf("%d entries refused, want 4:\n%s", n, got)
	}
}
