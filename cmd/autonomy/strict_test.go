package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// warnedHello is a copy of profiles/hello that draws two warnings: it declares kubernetes too,
// which warns that tasks:converse is partial there, and a maxConcurrent, which gh-actions warns
// it does not enforce.
func warnedHello(t *testing.T) string {
	t.Helper()
	dir := copyProfile(t, "hello")
	path := filepath.Join(dir, "ir.yml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	warned := strings.Replace(string(data), "targets: [gh-actions, local]", "targets: [gh-actions, local, kubernetes]", 1)
	warned = strings.Replace(warned, "policy:\n  box:", "policy:\n  maxConcurrent: 1\n  box:", 1)
	// An image of its own: kubernetes would warn of the placeholder image too.
	warned = strings.Replace(warned, "    local: { timezone: UTC, model: gpt-5-codex }\n", "    local: { timezone: UTC, model: gpt-5-codex }\n    kubernetes: { image: registry.example/autonomy-agent:v1 }\n", 1)
	if strings.Count(warned, "kubernetes]")+strings.Count(warned, "maxConcurrent: 1")+strings.Count(warned, "autonomy-agent:v1") != 3 {
		t.Fatalf("profiles/hello no longer has the lines warnedHello rewrites:\n%s", data)
	}
	if err := os.WriteFile(path, []byte(warned), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestStrictValidate: --strict makes a warning fail validate (exit 1, not valid, in text and
// JSON); without it the same profile is valid, and a profile without warnings passes both ways.
func TestStrictValidate(t *testing.T) {
	warned := warnedHello(t)
	if code, _, errOut := run(t, "validate", warned); code != 0 || !strings.Contains(errOut, "1 of 1 profile valid (0 errors, 2 warnings)") {
		t.Fatalf("without --strict: exit %d\n%s", code, errOut)
	}
	code, out, errOut := run(t, "validate", "--strict", warned)
	if code != 1 || !strings.Contains(out, "ir.yml:20:18: warning: gh-actions unsupported policy:maxConcurrent") ||
		!strings.Contains(errOut, "0 of 1 profile valid (0 errors, 2 warnings; --strict makes warnings fail)") {
		t.Errorf("--strict: exit %d, want 1\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	code, out, _ = run(t, "validate", "--strict", "--format", "json", warned)
	var doc struct {
		Profiles []validateReport `json:"profiles"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 1 || len(doc.Profiles) != 1 || doc.Profiles[0].Valid || doc.Profiles[0].Warnings != 2 {
		t.Errorf("--strict --format json: exit %d, %v\n%s", code, err, out)
	}
	if code, _, errOut := run(t, "validate", "--strict", "../../profiles/release-gate"); code != 0 {
		t.Errorf("--strict on a profile without warnings: exit %d\n%s", code, errOut)
	}
}

// TestStrictCompile: compile --strict installs nothing and exits 1 when the profile or the
// compile warns, for a warning from the target and for one from the command line (an
// undeclared target); without warnings it installs.
func TestStrictCompile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, _, errOut := run(t, "compile", "--strict", warnedHello(t), "--target", "gh-actions", "--out", dir)
	if code != 1 || !strings.Contains(errOut, "warning: gh-actions unsupported policy:maxConcurrent") ||
		!strings.Contains(errOut, "has 1 warning and --strict makes warnings fail; nothing was compiled") {
		t.Errorf("exit %d, want 1\n%s", code, errOut)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("--strict with a warning wrote %s (%v)", dir, err)
	}
	src := copyProfile(t, "release-gate")
	ir := filepath.Join(src, "ir.yml")
	data, err := os.ReadFile(ir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ir, []byte(strings.Replace(string(data), "targets: [gh-actions, local]", "targets: [local]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = run(t, "compile", "--strict", src, "--target", "gh-actions", "--out", dir)
	if code != 1 || !strings.Contains(errOut, `the profile does not declare target "gh-actions"`) || !strings.Contains(errOut, "nothing was compiled") {
		t.Errorf("undeclared target: exit %d, want 1\n%s", code, errOut)
	}
	if code, _, errOut := run(t, "compile", "--strict", "../../profiles/release-gate", "--target", "local", "--out", dir); code != 0 {
		t.Errorf("--strict without warnings: exit %d\n%s", code, errOut)
	}
}

// TestStrictCheck: check --strict exits 1 on an up-to-date install whose profile warns, naming
// the warnings, and 0 on one without.
func TestStrictCheck(t *testing.T) {
	for _, c := range []struct {
		profile string
		want    int
	}{{warnedHello(t), 1}, {"../../profiles/release-gate", 0}} {
		dir := t.TempDir()
		if code, _, errOut := run(t, "compile", c.profile, "--target", "gh-actions", "--out", dir); code != 0 {
			t.Fatalf("compile: exit %d\n%s", code, errOut)
		}
		if code, _, errOut := run(t, "check", c.profile, "--target", "gh-actions", "--dir", dir); code != 0 {
			t.Fatalf("check without --strict: exit %d\n%s", code, errOut)
		}
		code, _, errOut := run(t, "check", "--strict", c.profile, "--target", "gh-actions", "--dir", dir)
		if code != c.want || (c.want == 1 && !strings.Contains(errOut, "has 1 warning and --strict makes warnings fail")) {
			t.Errorf("%s: check --strict: exit %d, want %d\n%s", c.profile, code, c.want, errOut)
		}
	}
}

// TestStrictCheckJSON: check --strict --format json carries the warnings that fail it and why it
// failed in the JSON, and the warnings without --strict too; a drift's failure is named there.
func TestStrictCheckJSON(t *testing.T) {
	hello, dir := warnedHello(t), t.TempDir()
	if code, _, errOut := run(t, "compile", hello, "--target", "gh-actions", "--out", dir); code != 0 {
		t.Fatalf("compile: exit %d\n%s", code, errOut)
	}
	type report struct {
		Drift    []json.RawMessage `json:"drift"`
		Warnings ir.Diagnostics    `json:"warnings"`
		Failure  *string           `json:"failure"`
	}
	decode := func(out string) report {
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		return r
	}
	code, out, _ := run(t, "check", "--strict", "--format", "json", hello, "--target", "gh-actions", "--dir", dir)
	r := decode(out)
	if code != 1 || len(r.Drift) != 0 || len(r.Warnings) != 1 || r.Failure == nil ||
		!strings.Contains(r.Warnings[0].Message, "maxConcurrent") || r.Warnings[0].Pos.Line == 0 || r.Warnings[0].Severity != ir.Warning ||
		!strings.HasSuffix(*r.Failure, "ir.yml has 1 warning and --strict makes warnings fail") {
		t.Errorf("--strict: exit %d, want 1 with the warning and the failure\n%s", code, out)
	}
	code, out, _ = run(t, "check", "--format", "json", hello, "--target", "gh-actions", "--dir", dir)
	if r := decode(out); code != 0 || len(r.Warnings) != 1 || r.Failure != nil {
		t.Errorf("without --strict: exit %d, want 0 with the warning and no failure\n%s", code, out)
	}
	if err := os.Remove(filepath.Join(dir, ".github/workflows/greeter.yml")); err != nil {
		t.Fatal(err)
	}
	code, out, _ = run(t, "check", "--strict", "--format", "json", hello, "--target", "gh-actions", "--dir", dir)
	if r := decode(out); code != 1 || len(r.Drift) != 1 || r.Failure == nil || !strings.Contains(*r.Failure, "1 file drifted") {
		t.Errorf("drift: exit %d, want 1 with the drift named the failure\n%s", code, out)
	}
}
