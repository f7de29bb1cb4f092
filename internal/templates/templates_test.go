package templates

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	_ "github.com/autonomyhq/autonomy/substrates/registry" // the targets profiles name
)

func TestListNamesEveryBundledProfile(t *testing.T) {
	dirs, err := filepath.Glob("../../profiles/*/ir.yml")
	if err != nil || len(dirs) == 0 {
		t.Fatal(err)
	}
	var want []string
	for _, d := range dirs {
		want = append(want, filepath.Base(filepath.Dir(d)))
	}
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Errorf("templates %v, want the bundled profiles %v", got, want)
	}
	for _, tp := range List() {
		if tp.Summary == "" || len(tp.Targets) == 0 {
			t.Errorf("%s: summary %q, targets %v", tp.Name, tp.Summary, tp.Targets)
		}
	}
	if hello, ok := Lookup("hello"); !ok || hello.Summary != "the smallest useful fleet" || !reflect.DeepEqual(hello.Targets, []string{"gh-actions", "local"}) {
		t.Errorf("hello = %+v", hello)
	}
}

// TestWriteIsTheBundledProfile: every file of the bundled profile, byte for byte, but the
// modeline (pointing at the schema written beside it) and, with a target, the targets line.
func TestWriteIsTheBundledProfile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo", "autonomy")
	files, err := Write("sdlc", dir, Options{Target: "local"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		switch f {
		case SchemaFile:
			if !bytes.Equal(got, ir.JSONSchema()) {
				t.Errorf("%s is not autonomy schema's output", f)
			}
			continue
		case "ir.yml":
			lines := strings.SplitN(string(got), "\n", 2)
			if lines[0] != "# yaml-language-server: $schema=ir.schema.json" {
				t.Errorf("modeline %q", lines[0])
			}
			if !strings.Contains(string(got), "\ntargets: [local]\n") {
				t.Errorf("targets not narrowed:\n%s", got)
			}
			continue
		}
		want, err := os.ReadFile(filepath.Join("../../profiles/sdlc", filepath.FromSlash(f)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from profiles/sdlc/%s (%v)", f, f, err)
		}
	}
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() || len(p.Targets) != 1 || p.Targets[0].Value != "local" {
		t.Errorf("the written profile: %v\n%s", err, diags)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".autonomy-init-*"))
	if len(leftovers) != 0 {
		t.Errorf("stage left behind: %v", leftovers)
	}
}

func TestWriteRefuses(t *testing.T) {
	root := t.TempDir()
	full := filepath.Join(root, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "mine.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, template, dir, target, want string
	}{
		{"unknown template", "helo", filepath.Join(root, "a"), "", `no template "helo" (did you mean "hello"?)`},
		{"undeclared target", "release-gate", filepath.Join(root, "b"), "kubernetes", `declares the targets gh-actions, local, not "kubernetes"`},
		{"not empty", "hello", full, "", "is not empty"},
		{"a file", "hello", file, "", "is not a directory"},
	}
	for _, tt := range tests {
		if _, err := Write(tt.template, tt.dir, Options{Target: tt.target}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 2 {
		t.Errorf("Write left %d entries in %s, want the 2 of the test", len(entries), root)
	}
	if data, _ := os.ReadFile(filepath.Join(full, "mine.txt")); string(data) != "mine\n" {
		t.Error("the user's file changed")
	}
	// An empty directory is fine.
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Write("hello", empty, Options{}); err != nil {
		t.Errorf("an empty directory: %v", err)
	}
}

func TestAsk(t *testing.T) {
	var out bytes.Buffer
	name, target, err := Ask(strings.NewReader("nope\n5\n2\n"), &out)
	if err != nil || name != "sdlc" || target != "gh-actions" {
		t.Errorf("Ask = %q, %q, %v\n%s", name, target, err, out.String())
	}
	if !strings.Contains(out.String(), `"nope" is not one of`) || !strings.Contains(out.String(), "  5. sdlc") {
		t.Errorf("the questions:\n%s", out.String())
	}
	name, target, err = Ask(strings.NewReader("\n\n"), &out)
	if err != nil || name != Default || target != "" {
		t.Errorf("defaults: %q, %q, %v", name, target, err)
	}
	if _, _, err := Ask(strings.NewReader(""), &out); err == nil {
		t.Error("no answer at all was taken")
	}
}

func TestNextStepsQuoteTheDirectory(t *testing.T) {
	steps := NextSteps("my fleet's", "local", Trial{Actor: "greeter"})
	if steps[0] != `autonomy compile 'my fleet'\''s' --target local --dir .` {
		t.Errorf("first step %q", steps[0])
	}
}

// TestNextStepsTrialOnAFreePort: the local trial's scripted model takes a free port and hands it
// over in a file the next step loads: no fixed port that another program may hold.
func TestNextStepsTrialOnAFreePort(t *testing.T) {
	steps := strings.Join(NextSteps("autonomy", "local", Trial{Actor: "greeter"}), "\n")
	for _, want := range []string{"autonomy dev model --addr 127.0.0.1:0 --env-file model.env", "export $(cat model.env) OPENAI_API_KEY=trial\nautonomy doctor .\nautonomy runner launch greeter"} {
		if !strings.Contains(steps, want) {
			t.Errorf("the steps lack %q:\n%s", want, steps)
		}
	}
	if strings.Contains(steps, ":4000") {
		t.Errorf("a fixed port:\n%s", steps)
	}
}

// TestHelloHumanTrialInvolvesThePerson: hello-human's printed trial shows its human seam: the
// requester's scripted model launches the approver (the ask, with the ASK param), runner list
// shows it waiting for you with where its token is, and runner update answers it with the token;
// it used to launch the requester against the default answer, like hello, asking no one.
func TestHelloHumanTrialInvolvesThePerson(t *testing.T) {
	steps := strings.Join(NextSteps("autonomy", "local", TrialOf("hello-human", "requester")), "\n")
	for _, want := range []string{
		`tool: launch, args: {actor: approver`, "ASK: ", "--script trial.yml",
		"autonomy runner launch requester   # its model launches the approver",
		`autonomy runner list   # the approver's session, WAITING FOR "approver (a person): …", is the ask: its ID, and its token T in .autonomy/state/asks/ID.token`,
		"\nautonomy runner update ID --token T --status done --evidence ",
	} {
		if !strings.Contains(steps, want) {
			t.Errorf("the steps lack %q:\n%s", want, steps)
		}
	}
}

// TestBundledModelinesWorkOnceCopied: a bundled profile copied by hand into a repository keeps
// a working editor schema: its modeline is README's URL, not a path into this repository.
func TestBundledModelinesWorkOnceCopied(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const url = "# yaml-language-server: $schema=https://raw.githubusercontent.com/autonomyhq/autonomy/main/docs/ir.schema.json"
	if !strings.Contains(string(readme), "\n"+url+"\n") {
		t.Fatalf("README no longer shows the modeline %q", url)
	}
	files, _ := filepath.Glob("../../profiles/*/ir.yml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(string(data), "\n"); first != url {
			t.Errorf("%s: modeline %q, want README's %q", f, first, url)
		}
	}
}

// TestDocumentStepsWriteAndCommitEach: each document's folder made once, each document opened in
// the editor with what it holds, all committed; a path is quoted for the shell; no documents,
// no steps.
func TestDocumentStepsWriteAndCommitEach(t *testing.T) {
	role := func(name, path string) ir.Role {
		return ir.Role{Name: ir.String{Value: name}, Path: ir.String{Value: path}}
	}
	got := DocumentSteps([]ir.Role{role("vision", "docs/VISION.md"), role("constitution", "docs/CONSTITUTION.md"), role("roadmap", "plan's/ROADMAP.md")})
	want := []string{
		"mkdir -p docs",
		`mkdir -p 'plan'\''s'`,
		`"${EDITOR:-vi}" docs/VISION.md   # the vision: ` + roleNotes["vision"],
		`"${EDITOR:-vi}" docs/CONSTITUTION.md   # the constitution: ` + roleNotes["constitution"],
		`"${EDITOR:-vi}" 'plan'\''s/ROADMAP.md'   # the roadmap: ` + roleNotes["roadmap"],
		`git add docs/VISION.md docs/CONSTITUTION.md 'plan'\''s/ROADMAP.md' && git commit -m 'the governing documents of the fleet'`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := DocumentSteps([]ir.Role{role("vision", "-rf")}); got[0] != `"${EDITOR:-vi}" ./-rf   # the vision: `+roleNotes["vision"] || got[1] != "git add ./-rf && git commit -m 'the governing documents of the fleet'" {
		t.Errorf("a path like an option: %q", got)
	}
	if got := DocumentSteps(nil); got != nil {
		t.Errorf("no documents: %q", got)
	}
}
