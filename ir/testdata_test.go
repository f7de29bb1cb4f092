package ir

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected .out files of testdata (review the diff before committing)")

// TestBadProfiles checks every case in testdata/bad: NAME.yml holds one defect and NAME.out the exact
// diagnostics expected, positions pinned. Each case must fail validation.
func TestBadProfiles(t *testing.T) {
	runCases(t, "testdata/bad", true)
}

// TestWarnProfiles checks testdata/warn: profiles that are valid but draw warnings.
func TestWarnProfiles(t *testing.T) {
	runCases(t, "testdata/warn", false)
}

func runCases(t *testing.T, dir string, wantErrors bool) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no cases in %s", dir)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yml")
		t.Run(name, func(t *testing.T) {
			_, diags, err := Check(file)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if diags.HasErrors() != wantErrors {
				t.Errorf("HasErrors = %v, want %v:\n%s", diags.HasErrors(), wantErrors, diags)
			}
			if !wantErrors && len(diags) == 0 {
				t.Errorf("want warnings, got none")
			}
			got := diags.String()
			outFile := strings.TrimSuffix(file, ".yml") + ".out"
			if *update {
				if err := os.WriteFile(outFile, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(outFile)
			if err != nil {
				t.Fatalf("missing expected output: %v", err)
			}
			if got != string(want) {
				t.Errorf("diagnostics differ\n--- got\n%s--- want\n%s", got, want)
			}
		})
	}
}
