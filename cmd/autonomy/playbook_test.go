//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/testfs"
	"github.com/autonomyhq/autonomy/playbook"
)

func detected(file string, data []byte) string {
	f, _ := playbook.Detect(file, data)
	return string(f)
}

// TestPlaybookValidateCases runs the CLI over every testdata case of every format: a bad case
// exits 1 printing exactly its pinned diagnostics, a warn case exits 0 printing its warnings, a
// good case exits 0 printing nothing.
func TestPlaybookValidateCases(t *testing.T) {
	n := 0
	for _, format := range []string{"capsule", "overlay", "steps", "workflow"} {
		dir := filepath.Join("..", "..", "playbook", format, "testdata")
		for _, kind := range []string{"good", "bad", "warn"} {
			files, _ := filepath.Glob(filepath.Join(dir, kind, "*"))
			for _, file := range files {
				if strings.HasSuffix(file, ".out") {
					continue
				}
				n++
				code, out, _ := run(t, "playbook", "validate", file)
				if data, _ := os.ReadFile(file); detected(file, data) != format {
					// Alone, a file without the marks of its format (an overlay with no
					// schema: key) is read as another: it must still fail.
					if kind != "bad" || code != 1 {
						t.Errorf("%s: detected as %q; exit %d", file, detected(file, data), code)
					}
					continue
				}
				out = strings.ReplaceAll(out, dir+string(filepath.Separator), "testdata/")
				switch kind {
				case "good":
					if code != 0 || out != "" {
						t.Errorf("%s: exit %d, stdout %q; want 0 and nothing", file, code, out)
					}
				default:
					base := filepath.Base(file)
					want, err := os.ReadFile(filepath.Join(dir, kind, base[:strings.Index(base, ".")]+".out"))
					if err != nil {
						t.Fatal(err)
					}
					if wantCode := map[string]int{"bad": 1, "warn": 0}[kind]; code != wantCode || out != string(want) {
						t.Errorf("%s: exit %d, want %d\n--- got\n%s--- want\n%s", file, code, wantCode, out, want)
					}
				}
			}
		}
	}
	if n < 40 {
		t.Fatalf("only %d cases", n)
	}
}

func TestPlaybookValidateJSON(t *testing.T) {
	code, out, _ := run(t, "playbook", "validate", "--format", "json", "../../playbook/steps/testdata/good/minimal.md", "../../playbook/workflow/testdata/bad/namespace.yml", "no/such/file.md")
	if code != 2 {
		t.Fatalf("exit %d, want 2 (an unreadable file wins)", code)
	}
	var got struct {
		Playbooks []struct {
			File, Format string
			Valid        bool
			Errors       int
			Diagnostics  []struct{ Pos struct{ Line, Column int } }
		}
		Failures []struct{ Path, Error string }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Playbooks) != 2 || got.Playbooks[0].Format != "steps" || !got.Playbooks[0].Valid || got.Playbooks[1].Format != "workflow" || got.Playbooks[1].Errors != 4 { // the 4th: a node step names no script file
		t.Fatalf("%+v", got.Playbooks)
	}
	if d := got.Playbooks[1].Diagnostics[0]; d.Pos.Line != 4 || d.Pos.Column != 14 {
		t.Errorf("first diagnostic at %+v", d.Pos)
	}
	if len(got.Failures) != 1 || got.Failures[0].Path != "no/such/file.md" {
		t.Errorf("failures %+v", got.Failures)
	}
}

func TestPlaybookUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"playbook", "validate"}, "requires at least 1 arg"},
		{[]string{"playbook", "validate", "--format", "xml", "x.md"}, `unknown --format "xml"`},
		{[]string{"playbook", "validate", "no/such/file.md"}, "no/such/file.md: no such file or directory"},
		{[]string{"playbook", "index"}, "accepts 1 arg"},
		{[]string{"playbook", "index", "no/such/dir"}, "no/such/dir: not a directory"},
	} {
		code, _, errOut := run(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// copyTree copies the files of src into a new temporary directory.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	testfs.CopyTree(t, src, dst)
	return dst
}

// TestPlaybookIndex: index writes the package's _index.md, which validate then accepts; a second
// run rewrites nothing; --check finds a stale index; an overlay with errors blocks the write.
func TestPlaybookIndex(t *testing.T) {
	dir := copyTree(t, "../../playbook/overlay/testdata/packages/good")
	index := filepath.Join(dir, "_index.md")
	os.Remove(index)
	if code, _, _ := run(t, "playbook", "validate", dir); code != 1 {
		t.Fatalf("a package without an index validates: exit %d", code)
	}
	if code, _, errOut := run(t, "playbook", "index", "--check", dir); code != 1 || !strings.Contains(errOut, "is stale") {
		t.Fatalf("--check on a missing index: exit %d, %s", code, errOut)
	}
	code, out, errOut := run(t, "playbook", "index", dir)
	if code != 0 || out != "write "+index+"\n" || !strings.Contains(errOut, "2 overlays indexed") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	first, _ := os.ReadFile(index)
	want, _ := os.ReadFile("../../playbook/overlay/testdata/packages/good/_index.md")
	if string(first) != string(want) {
		t.Fatalf("index differs from the pinned one:\n%s", first)
	}
	if code, out, errOut := run(t, "playbook", "validate", dir); code != 0 || out != "" {
		t.Fatalf("the indexed package does not validate: exit %d\n%s%s", code, out, errOut)
	}
	info, _ := os.Stat(index)
	if code, out, _ := run(t, "playbook", "index", dir); code != 0 || out != "" {
		t.Fatalf("second run: exit %d, stdout %q (want nothing rewritten)", code, out)
	}
	if again, _ := os.Stat(index); !again.ModTime().Equal(info.ModTime()) {
		t.Error("an up-to-date index was rewritten")
	}
	if code, _, _ := run(t, "playbook", "index", "--check", dir); code != 0 {
		t.Fatalf("--check on a fresh index: exit %d", code)
	}
	// A changed priority makes the index stale, for validate and for --check.
	tone := filepath.Join(dir, "operator", "alice", "tone-block.md")
	data, _ := os.ReadFile(tone)
	os.WriteFile(tone, []byte(strings.Replace(string(data), "status: shadow", "status: shadow\npriority: 90", 1)), 0o644)
	if code, out, _ := run(t, "playbook", "validate", dir); code != 1 || !strings.Contains(out, "_index.md:9:1: _index.md is out of date") {
		t.Fatalf("stale index: exit %d\n%s", code, out)
	}
	if code, _, _ := run(t, "playbook", "index", "--check", dir); code != 1 {
		t.Fatalf("--check on a stale index: exit %d", code)
	}
	// An overlay with errors: nothing is written.
	os.WriteFile(tone, []byte(strings.Replace(string(data), "kind: block-replacement", "kind: prepend", 1)), 0o644)
	before, _ := os.ReadFile(index)
	if code, out, errOut := run(t, "playbook", "index", dir); code != 1 || !strings.Contains(out, `unknown kind "prepend"`) || !strings.Contains(errOut, "not written") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(index); string(after) != string(before) {
		t.Fatal("the index was written although an overlay has errors")
	}
}

func TestPlaybookChecks(t *testing.T) {
	code, out, _ := run(t, "playbook", "checks", "--format", "json")
	var list []struct {
		Number int
		As     string
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 21 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	notChecked := 0
	for _, c := range list {
		if c.As == "not checked" {
			notChecked++
		}
	}
	if notChecked != 2 {
		t.Errorf("%d checks not checked, want 2 (15 and 18)", notChecked)
	}
	if code, out, _ := run(t, "playbook", "checks"); code != 0 || !strings.Contains(out, "15  not checked      Cold-boot-verifiable") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// TestPlaybookIndexTrailingSlash: "playbooks/" names the same package as "playbooks" (it once
// indexed no overlay at all, and --check called the committed index stale).
func TestPlaybookIndexTrailingSlash(t *testing.T) {
	pkg := filepath.Join(copyProfile(t, "librarian"), "playbooks")
	want, err := os.ReadFile(filepath.Join(pkg, "_index.md"))
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run(t, "playbook", "index", "--check", pkg+"/"); code != 0 {
		t.Fatalf("index --check DIR/: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, "playbook", "index", pkg+"/"); code != 0 || !strings.Contains(out+errOut, "3 overlays") {
		t.Fatalf("index DIR/: exit %d\n%s%s", code, out, errOut)
	}
	if got, _ := os.ReadFile(filepath.Join(pkg, "_index.md")); string(got) != string(want) {
		t.Errorf("index DIR/ rewrote the index:\n%s", got)
	}
}
