package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repeatedWarnings writes a profile whose n actors each draw the same warning on local (an event
// trigger local cannot fire).
func repeatedWarnings(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("schema: autonomy.ir.v1\ntargets: [local]\nactors:\n")
	for i := range n {
		fmt.Fprintf(&b, "  w%d:\n    behavior: skills/w\n    triggers:\n      - event: issues\n        params: { ISSUE: subject.ref }\n", i)
	}
	if err := os.MkdirAll(filepath.Join(dir, "skills", "w"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "skills", "w", "SKILL.md"), []byte("# w\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ir.yml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRepeatedWarningsPrintOnce: validate, compile and check print a warning that 1,200 actors
// share once, positioned, naming the next actors with their positions and counting the rest;
// --verbose prints every one; the counts stay the true counts.
func TestRepeatedWarningsPrintOnce(t *testing.T) {
	prof := repeatedWarnings(t, 1200)
	file := filepath.Join(prof, "ir.yml")
	code, out, errOut := run(t, "validate", prof)
	if code != 0 {
		t.Fatalf("validate: exit %d\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("validate printed %d lines, want 1:\n%.2000s", len(lines), out)
	}
	for _, want := range []string{file + ":7:9: warning: actor \"w0\": local ", "actor \"w1\" at " + file + ":12:9", "actor \"w2\" at " + file + ":17:9", "… and 1,197 more actors"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the warning lacks %q:\n%s", want, lines[0])
		}
	}
	if !strings.Contains(errOut, "(0 errors, 1200 warnings; --verbose prints every one)") {
		t.Errorf("summary: %s", errOut)
	}
	if code, out, _ := run(t, "validate", "--verbose", prof); code != 0 || strings.Count(out, "\n") != 1200 {
		t.Errorf("validate --verbose: exit %d, %d lines, want 1200", code, strings.Count(out, "\n"))
	}
	dir := t.TempDir()
	for _, args := range [][]string{
		{"compile", prof, "--dir", dir, "--dry-run"},
		{"compile", prof, "--dir", dir},
		{"check", prof, "--dir", dir},
	} {
		code, _, errOut := run(t, args...)
		if code != 0 || strings.Count(errOut, "more actors") != 1 || strings.Count(errOut, "warning:") != 1 {
			t.Errorf("%s: exit %d, want one condensed warning:\n%.3000s", args[0], code, errOut)
		}
		code, _, errOut = run(t, append(args, "--verbose")...)
		if code != 0 || strings.Count(errOut, "warning:") != 1200 {
			t.Errorf("%s --verbose: exit %d, %d warnings, want 1200", args[0], code, strings.Count(errOut, "warning:"))
		}
	}
}

// TestRepeatedWarningsAnnotateEvery: the github and sarif formats of validate and check give
// every warning its own annotation or result, at its own line, condensed or not: a code
// scanning view shows each place.
func TestRepeatedWarningsAnnotateEvery(t *testing.T) {
	prof := repeatedWarnings(t, 200)
	dir := t.TempDir()
	if code, _, errOut := run(t, "compile", prof, "--dir", dir); code != 0 {
		t.Fatalf("compile: exit %d\n%s", code, errOut)
	}
	for _, cmd := range [][]string{{"validate", prof}, {"check", prof, "--dir", dir}} {
		code, out, errOut := run(t, append(cmd, "--format", "github")...)
		if code != 0 || strings.Count(out, "::warning ") != 200 || strings.Contains(out, "more actors") {
			t.Errorf("%s --format github: exit %d, %d annotations, want 200\n%s", cmd[0], code, strings.Count(out, "::warning "), errOut)
		}
		code, out, _ = run(t, append(cmd, "--format", "sarif")...)
		var log struct {
			Runs []struct {
				Results []struct {
					Level   string `json:"level"`
					Message struct {
						Text string `json:"text"`
					} `json:"message"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(out), &log); err != nil || code != 0 || len(log.Runs) != 1 {
			t.Fatalf("%s --format sarif: exit %d, %v\n%.500s", cmd[0], code, err, out)
		}
		if n := len(log.Runs[0].Results); n != 200 {
			t.Errorf("%s --format sarif: %d results, want 200", cmd[0], n)
		}
	}
}
