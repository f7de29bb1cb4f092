package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/templates"
)

// TestInitEveryTemplate: each template, whole and narrowed to each of its targets, writes a
// profile that validates and compiles (dry run) for every target it keeps, and init prints the
// next steps of each.
func TestInitEveryTemplate(t *testing.T) {
	for _, tp := range templates.List() {
		for _, target := range append([]string{""}, tp.Targets...) {
			dir := filepath.Join(t.TempDir(), "autonomy")
			args := []string{"init", dir, "--template", tp.Name}
			if target != "" {
				args = append(args, "--target", target)
			}
			code, out, errOut := run(t, args...)
			if code != 0 || !strings.Contains(errOut, "it validates") || !strings.Contains(out, "create "+filepath.ToSlash(dir)+"/ir.yml") {
				t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
			}
			keep := tp.Targets
			if target != "" {
				keep = []string{target}
			}
			for _, tg := range tp.Targets {
				if got := strings.Contains(out, "Next, for "+tg+":"); got != (target == "" || tg == target) {
					t.Errorf("%v: next steps for %s printed: %v\n%s", args, tg, got, out)
				}
			}
			if code, out, errOut := run(t, "validate", dir); code != 0 {
				t.Errorf("validate %s (%s): exit %d\n%s%s", tp.Name, target, code, out, errOut)
			}
			for _, tg := range keep {
				if code, _, errOut := run(t, "compile", dir, "--target", tg, "--dir", t.TempDir(), "--dry-run"); code != 0 {
					t.Errorf("compile %s for %s: exit %d\n%s", tp.Name, tg, code, errOut)
				}
			}
		}
	}
}

// TestInitAsksNothingWithoutATerminal: stdin that is not a terminal is never read; the default
// template is written.
func TestInitAsksNothingWithoutATerminal(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, errOut := runWithStdin(t, "sdlc\nlocal\n", "init")
	if code != 0 || strings.Contains(errOut, "Template [") || !strings.Contains(errOut, "from the hello template") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join("autonomy", "ir.yml")); err != nil {
		t.Errorf("the default DIR: %v", err)
	}
	// Again: the directory is not empty now; nothing is written.
	code, _, errOut = run(t, "init")
	if code != 2 || !strings.Contains(errOut, "autonomy is not empty") {
		t.Errorf("second init: exit %d\n%s", code, errOut)
	}
}

func TestInitList(t *testing.T) {
	code, out, _ := run(t, "init", "--list")
	if code != 0 || !strings.Contains(out, "hello ") || !strings.Contains(out, "the smallest useful fleet") {
		t.Errorf("exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "init", "--list", "--format", "json")
	var list []templates.Template
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != len(templates.List()) {
		t.Errorf("json: exit %d\n%s", code, out)
	}
	if code, _, errOut := run(t, "init", t.TempDir()+"/x", "--template", "helo"); code != 2 || !strings.Contains(errOut, `did you mean "hello"?`) {
		t.Errorf("unknown template: exit %d\n%s", code, errOut)
	}
}

// TestInitListColumnsAlign: each column of --list starts at the same place on every line,
// whatever the longest target list.
func TestInitListColumnsAlign(t *testing.T) {
	_, out, _ := run(t, "init", "--list")
	col := -1
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		tm, ok := templates.Lookup(strings.Fields(line)[0])
		if !ok {
			t.Fatalf("a line of no template: %q", line)
		}
		at := strings.Index(line, "  "+tm.Summary)
		if at < 0 || col >= 0 && at != col {
			t.Errorf("the summary of %s starts at %d, the others' at %d:\n%s", tm.Name, at, col, out)
		}
		col = at
	}
}

// TestInitTakesTheTargetsOtherNames: --target takes what compile takes, a deprecated alias
// (github) too, and writes the profile for the target's name; an unknown one is named with the
// nearest.
func TestInitTakesTheTargetsOtherNames(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	if code, out, errOut := run(t, "init", dir, "--template", "hello", "--target", "github"); code != 0 {
		t.Fatalf("init --target github: exit %d\n%s%s", code, out, errOut)
	}
	data, err := os.ReadFile(filepath.Join(dir, "ir.yml"))
	if err != nil || !strings.Contains(string(data), "targets: [gh-actions]") {
		t.Errorf("the profile does not target gh-actions alone (%v):\n%s", err, data)
	}
	if code, _, errOut := run(t, "init", t.TempDir()+"/x", "--template", "hello", "--target", "gh-action"); code != 2 || !strings.Contains(errOut, `not "gh-action" (did you mean "gh-actions"?)`) {
		t.Errorf("unknown target: exit %d\n%s", code, errOut)
	}
}

// runWithStdin is run with stdin reading input.
func runWithStdin(t *testing.T, input string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	code = Run(args, strings.NewReader(input), &out, &errOut)
	return code, out.String(), errOut.String()
}
