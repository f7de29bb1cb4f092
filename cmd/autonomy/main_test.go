package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/testfs"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

// run calls Run as the binary would and returns its exit code and output.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestValidateExampleProfiles(t *testing.T) {
	dirs, _ := filepath.Glob("../../profiles/*")
	code, out, errOut := run(t, append([]string{"validate"}, dirs...)...)
	if code != 0 || !strings.Contains(errOut, "6 of 6 profiles valid (0 errors, ") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	// What remains are the targets' warnings: what a substrate does not support.
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line != "" && !strings.Contains(line, ": warning: ") {
			t.Errorf("not a warning: %s", line)
		}
	}
}

// TestValidateRunsTargetChecks: validate refuses what compile would refuse for a declared target,
// positioned, and skips targets the profile does not declare.
func TestValidateRunsTargetChecks(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "skills/a"), 0o755)
	os.WriteFile(filepath.Join(dir, "skills/a/SKILL.md"), []byte("# a\n"), 0o644)
	write := func(targets, box string) string {
		src := "schema: autonomy.ir.v1\ntargets: [" + targets + "]\nagents:\n  a: { behavior: a, triggers: [{ dispatch: true }] }\npolicy:\n  box:\n" + box
		if err := os.WriteFile(filepath.Join(dir, "ir.yml"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	box := "    local: { timezone: Mars/Olympus }\n    gh-actions: { bot_email: a@b.c, git: { email: d@e.f } }\n"
	code, out, _ := run(t, "validate", write("local, gh-actions", box))
	for _, want := range []string{
		`ir.yml:7:24: policy.box.local.timezone "Mars/Olympus" is not a known time zone`,
		`ir.yml:8:44: policy.box.gh-actions.bot_email and git.email both set the same thing`,
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("exit %d, want 1 and %q in:\n%s", code, want, out)
		}
	}
	if code, out, _ := run(t, "validate", write("gh-actions", box)); code != 1 || strings.Contains(out, "timezone") {
		t.Errorf("a target the profile does not declare is checked: exit %d\n%s", code, out)
	}
}

// TestValidateLostTrigger: a mistyped event or activity type of a declared gh-actions target
// fails validate (exit 1) at the offending value with the nearest valid name, where it used to
// draw a warning and the trigger was left out of the workflow.
func TestValidateLostTrigger(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"event: pull_request_target", "event: pull-request",
			`ir.yml:50:16: actor "reviewer": GitHub Actions knows no event "pull-request", so the trigger cannot be compiled (did you mean "pull_request"?)`},
		{"types: [opened, synchronize, reopened]", "types: [open, synchronize, reopened]",
			`ir.yml:51:27: actor "reviewer": event "pull_request_target" cannot be compiled as configured: GitHub has no pull_request_target activity type "open" (did you mean "opened"?)`},
		{"event: issue_comment\n        config: { types: [created] }", "event: issues\n        config: { branches: [main] }",
			`ir.yml:43:19: actor "reviewer": event "issues" cannot be compiled as configured: GitHub has no "branches" filter for issues (only for merge_group, push, pull_request, pull_request_target, workflow_run) (valid keys for issues: types)`},
		{"event: issue_comment\n        config: { types: [created] }", "event: issues\n        config: { types: [] }",
			`ir.yml:43:26: actor "reviewer": event "issues" cannot be compiled as configured: types is empty, and GitHub refuses an empty types (list at least one value, or remove types)`},
	} {
		dir := copyProfile(t, "sdlc")
		file := filepath.Join(dir, "ir.yml")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), c.from) {
			t.Fatalf("profiles/sdlc has no %q", c.from)
		}
		if err := os.WriteFile(file, []byte(strings.Replace(string(data), c.from, c.to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := run(t, "validate", dir)
		if code != 1 || !strings.Contains(out, file+strings.TrimPrefix(c.want, "ir.yml")) || !strings.Contains(errOut, "0 of 1 profile valid (1 error,") {
			t.Errorf("%s: exit %d, want 1 and\n%s\nin:\n%s%s", c.to, code, c.want, out, errOut)
		}
		if code, _, errOut := run(t, "compile", dir, "--target", "gh-actions", "--out", t.TempDir()); code != 1 || !strings.Contains(errOut, "nothing was compiled") {
			t.Errorf("%s: compile exit %d, want 1\n%s", c.to, code, errOut)
		}
	}
}

// TestValidateBadCases runs the CLI over every bad case of ir/testdata: exit 1, and stdout is
// exactly the pinned diagnostics.
func TestValidateBadCases(t *testing.T) {
	files, _ := filepath.Glob("../../ir/testdata/bad/*.yml")
	if len(files) < 30 {
		t.Fatalf("only %d bad cases", len(files))
	}
	for _, file := range files {
		want, err := os.ReadFile(strings.TrimSuffix(file, ".yml") + ".out")
		if err != nil {
			t.Fatal(err)
		}
		code, out, _ := run(t, "validate", file)
		// The pinned files name paths relative to ir/.
		out = strings.ReplaceAll(out, "../../ir/", "")
		if code != 1 || out != string(want) {
			t.Errorf("%s: exit %d, want 1\n--- got\n%s--- want\n%s", file, code, out, want)
		}
	}
}

// TestValidateWarnCases: warnings are printed and do not fail (exit 0).
func TestValidateWarnCases(t *testing.T) {
	files, _ := filepath.Glob("../../ir/testdata/warn/*.yml")
	if len(files) == 0 {
		t.Fatal("no warn cases")
	}
	for _, file := range files {
		code, out, _ := run(t, "validate", file)
		if code != 0 || !strings.Contains(out, ": warning: ") {
			t.Errorf("%s: exit %d, stdout %q; want 0 and the warning", file, code, out)
		}
	}
}

func TestValidateJSON(t *testing.T) {
	code, out, _ := run(t, "validate", "--format", "json", "../../profiles/hello", "../../ir/testdata/bad/unknown-capability.yml")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var got struct {
		Profiles []struct {
			Profile, File string
			Valid         bool
			Errors        int
			Diagnostics   []struct {
				File     string
				Pos      struct{ Line, Column int }
				Severity string
				Message  string
				Hint     string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Profiles) != 2 || !got.Profiles[0].Valid || got.Profiles[1].Valid || got.Profiles[1].Errors != 1 {
		t.Fatalf("reports = %+v", got.Profiles)
	}
	d := got.Profiles[1].Diagnostics[0]
	if d.Pos.Line < 1 || d.Pos.Column < 1 || d.Severity != "error" || !strings.Contains(d.Hint, "did you mean") {
		t.Errorf("diagnostic = %+v; want a positioned error with a hint", d)
	}
}

func TestUsageAndIOErrorsExit2(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"validate"}, "requires at least 1 arg"},
		{[]string{"validate", "no/such/profile"}, "no/such/profile: no such profile"},
		{[]string{"compile", "../../profiles/hello", "--target", "loacl"}, `unknown target "loacl" (did you mean "local"?)`},
		{[]string{"validate", "--format", "xml", "../../profiles/hello"}, `unknown --format "xml"`},
		{[]string{"validate", "--bogus", "../../profiles/hello"}, "unknown flag: --bogus"},
		{[]string{"validate", "../../README.md"}, ""}, // a file that is not a profile: problems, not usage
		{[]string{"catalog", "nouns"}, `invalid argument "nouns"`},
		{[]string{"nosuchcommand"}, `unknown command "nosuchcommand"`},
		{[]string{"schema", "extra"}, `unknown command "extra"`},
	} {
		code, _, errOut := run(t, c.args...)
		if c.want == "" {
			if code != 1 {
				t.Errorf("%v: exit %d, want 1", c.args, code)
			}
			continue
		}
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d with stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
	// An I/O error on one profile does not hide the problems of another, and wins the exit code.
	code, out, _ := run(t, "validate", "no/such/profile", "../../ir/testdata/bad/unknown-capability.yml")
	if code != 2 || !strings.Contains(out, "unknown capability") {
		t.Errorf("exit %d, stdout %q", code, out)
	}
}

func TestCatalogJSON(t *testing.T) {
	code, out, _ := run(t, "catalog", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var got map[string][]map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got["capabilities"]) != 9 || len(got["sources"]) != 5 || len(got["states"]) != 8 || len(got["fields"]) == 0 {
		t.Fatalf("catalog sizes: %d capabilities, %d sources, %d states, %d fields", len(got["capabilities"]), len(got["sources"]), len(got["states"]), len(got["fields"]))
	}
	if len(got["targets"]) != len(registry.All()) {
		t.Errorf("catalog lists %d targets, the registry has %d", len(got["targets"]), len(registry.All()))
	}
	if a, b, c, d := strings.Index(out, `"capabilities"`), strings.Index(out, `"sources"`), strings.Index(out, `"states"`), strings.Index(out, `"fields"`); !(a < b && b < c && c < d) {
		t.Errorf("catalogs are not in the standard's order:\n%s", out)
	}
	code, out, _ = run(t, "catalog", "states")
	if code != 0 || !strings.Contains(out, "input-required") || strings.Contains(out, "code:propose") {
		t.Errorf("catalog states: exit %d\n%s", code, out)
	}
}

func TestSchemaMatchesDocs(t *testing.T) {
	code, out, _ := run(t, "schema")
	want, err := os.ReadFile("../../docs/ir.schema.json")
	if code != 0 || err != nil || out != string(want) {
		t.Fatalf("autonomy schema differs from docs/ir.schema.json (run make schema): exit %d, %v", code, err)
	}
}

// TestNoArguments: autonomy alone prints the help on stderr and exits 2, a usage error.
func TestNoArguments(t *testing.T) {
	code, out, errOut := run(t)
	if code != 2 || out != "" || !strings.Contains(errOut, "Usage:") || !strings.Contains(errOut, "Available Commands:") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	// --help is a request, not a mistake.
	if code, out, _ := run(t, "--help"); code != 0 || !strings.Contains(out, "Available Commands:") {
		t.Fatalf("--help: exit %d\n%s", code, out)
	}
}

func TestVersionAndHelp(t *testing.T) {
	if code, out, _ := run(t, "version"); code != 0 || !strings.HasPrefix(out, "autonomy ") {
		t.Errorf("version: exit %d, %q", code, out)
	}
	for _, cmd := range []string{"validate", "catalog", "schema", "version"} {
		code, out, _ := run(t, cmd, "--help")
		if code != 0 || !strings.Contains(out, "Examples:") {
			t.Errorf("%s --help: exit %d, no examples:\n%s", cmd, code, out)
		}
	}
}

// copyProfile copies a bundled profile into a temp dir, so a test may edit it.
func copyProfile(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	testfs.CopyTree(t, filepath.Join("../../profiles", name), dst)
	return dst
}
