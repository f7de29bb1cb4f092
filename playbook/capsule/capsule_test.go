package capsule

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/casetest"
)

func TestCases(t *testing.T) { casetest.Run(t, "testdata", casetest.Of(Check), ".md") }

// TestLibraries checks testdata/library/CASE/: every playbook of the folder validated together,
// its exact diagnostics in CASE.out.
func TestLibraries(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/library/*")
	n := 0
	for _, dir := range dirs {
		if filepath.Ext(dir) == ".out" {
			continue
		}
		n++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
			var pbs []*Playbook
			var diags ir.Diagnostics
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				p, d := Check(f, data)
				diags = append(diags, d...)
				pbs = append(pbs, p)
			}
			diags = append(diags, ValidateLibrary(pbs)...).Sort()
			casetest.Compare(t, dir+".out", diags.String())
		})
	}
	if n == 0 {
		t.Fatal("no library cases")
	}
}

func TestVerificationMethod(t *testing.T) {
	for file, want := range map[string]string{"testdata/good/release.playbook.md": "human-sign-off", "testdata/good/draft-steps.playbook.md": "self-attestation"} {
		data, _ := os.ReadFile(file)
		p, _ := Check(file, data)
		if p.Verification.Value != want {
			t.Errorf("%s: method %q, want %q", file, p.Verification.Value, want)
		}
	}
}

// TestChecksTable: the table has the seed's 21 checks, numbered in order, each carried out or
// said not to be.
func TestChecksTable(t *testing.T) {
	if len(Checks) != 21 {
		t.Fatalf("%d checks", len(Checks))
	}
	for i, c := range Checks {
		if c.Number != i+1 || c.Wording == "" || (c.As != AsError && c.As != AsWarning && c.As != NotChecked && c.As != LibraryError) {
			t.Errorf("check %d: %+v", i+1, c)
		}
		if strings.HasPrefix(c.Tag, "enforced") && c.As != AsError && c.As != LibraryError {
			t.Errorf("enforced check %d is not an error", c.Number)
		}
	}
}

// TestChecksDocumented: docs/playbooks.md carries the table of checks exactly as Checks renders
// it, between its markers (go test -update rewrites it).
func TestChecksDocumented(t *testing.T) {
	const doc = "../../docs/playbooks.md"
	const begin, end = "<!-- capsule-checks:begin -->\n", "<!-- capsule-checks:end -->"
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the capsule-checks markers", doc)
	}
	want := ChecksMarkdown()
	if got := text[i+len(begin) : j]; got != want {
		if updateDocs() {
			if err := os.WriteFile(doc, []byte(text[:i+len(begin)]+want+text[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("the table of checks in %s is stale (go test ./playbook/capsule -update):\n%s", doc, want)
	}
}

func updateDocs() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func TestAboveOne(t *testing.T) {
	for v, want := range map[string]bool{"1": false, "1.0": false, "v1.0": false, "1.0.0": false, "0.9": false, "1.0.1": true, "1.1": true, "v2": true, "2.0-rc.1": true, "10.0": true} {
		if got, ok := aboveOne(v); !ok || got != want {
			t.Errorf("aboveOne(%q) = %v, %v; want %v", v, got, ok, want)
		}
	}
	if _, ok := aboveOne("<version>"); ok {
		t.Error("a placeholder read as a number")
	}
}
