package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// deliberate are the warnings a profile written for the reference implementation may draw: each
// is something autonomy deliberately does differently, and docs/migrating.md lists it under the
// same words (checked below).
var deliberate = []string{
	"gh-actions unsupported policy:maxConcurrent",
	"gh-actions partial field:result",
	"local partial trigger:event",
	"local partial capability:@scope",
	"gh-actions partial capability:@scope",
	"GitHub cannot narrow",
	"forwards no subject.ref",
	"holds code:propose in the shared workspace",
	"holds code:propose and names no reviewer",
}

// TestReferenceStyleProfiles: the profiles of ir/testdata/reference, written the way profiles
// for the reference implementation are, validate and compile to both targets through the CLI
// with no error, warn only about deliberate differences, install the policy and the reference's
// review contract, and are up to date for check.
func TestReferenceStyleProfiles(t *testing.T) {
	guide, err := os.ReadFile("../../docs/migrating.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deliberate {
		if !strings.Contains(string(guide), d) {
			t.Errorf("docs/migrating.md does not list the deliberate difference %q", d)
		}
	}
	dirs, _ := filepath.Glob("../../ir/testdata/reference/*")
	if len(dirs) < 2 {
		t.Fatalf("only %d reference-style profiles", len(dirs))
	}
	for _, dir := range dirs {
		code, out, errOut := run(t, "validate", dir)
		if code != 0 {
			t.Fatalf("validate %s: exit %d\n%s%s", dir, code, out, errOut)
		}
		checkDeliberate(t, dir, out)
		for _, target := range declaredTargets(t, dir) {
			inst := filepath.Join(t.TempDir(), "repo")
			// The repository has the governing document the profile does not install, as a real
			// one does: a missing one draws a warning about the repository, not the profile.
			if err := os.MkdirAll(filepath.Join(inst, "docs"), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, doc := range []string{"ROADMAP.md"} {
				if err := os.WriteFile(filepath.Join(inst, "docs", doc), []byte("# "+doc+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, _, errOut := run(t, "compile", dir, "--target", target, "--out", inst)
			if code != 0 {
				t.Fatalf("compile %s for %s: exit %d\n%s", dir, target, code, errOut)
			}
			checkDeliberate(t, dir+" "+target, errOut)
			if code, out, _ := run(t, "check", dir, "--target", target, "--dir", inst); code != 0 {
				t.Errorf("check %s for %s: exit %d\n%s", dir, target, code, out)
			}
			var policy map[string]any
			if err := json.Unmarshal(readInstalled(t, inst, ".autonomy/policy.json"), &policy); err != nil || policy["box"] == nil {
				t.Errorf("%s %s: policy.json: %v %v", dir, target, err, policy)
			}
			if filepath.Base(dir) != "oa-fleet" {
				continue
			}
			// The reference's review contract is installed as the reference defines it.
			var got, want map[string]any
			_ = json.Unmarshal(readInstalled(t, inst, ".autonomy/results/open-autonomy.review.v1.json"), &got)
			delete(got, "//")
			_ = json.Unmarshal([]byte(ir.ResultContracts[ir.ReferenceReviewContract]), &want)
			if !reflect.DeepEqual(got, want) || got["$id"] != "open-autonomy.review.v1" {
				t.Errorf("%s %s: the installed review contract differs from the reference's", dir, target)
			}
			// human_required_paths is the profile's, verbatim; the governing documents are gated
			// for both targets' agents as a list of their own.
			box := policy["box"].(map[string]any)
			paths, _ := box["risk"].(map[string]any)["human_required_paths"].([]any)
			if !reflect.DeepEqual(paths, []any{".github/workflows/**", "scripts/sweep.ts"}) {
				t.Errorf("%s %s: human_required_paths = %v", dir, target, paths)
			}
			if docs := policy["governingDocuments"]; !reflect.DeepEqual(docs, []any{"docs/VISION.md", "docs/CONSTITUTION.md"}) {
				t.Errorf("%s %s: governingDocuments = %v", dir, target, docs)
			}
		}
	}
}

// checkDeliberate fails on any diagnostic that is not a warning about a deliberate difference.
func checkDeliberate(t *testing.T, what, text string) {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, ".yml:") {
			continue // summaries
		}
		ok := strings.Contains(line, ": warning: ")
		if ok {
			ok = false
			for _, d := range deliberate {
				if strings.Contains(line, d) {
					ok = true
				}
			}
		}
		if !ok {
			t.Errorf("%s: not a deliberate difference: %s", what, line)
		}
	}
}

func readInstalled(t *testing.T, dir, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// declaredTargets are the targets the profile in dir declares: a reference-style profile is
// proven on the targets it names; another target warns about what it does not support, which is
// that target's support declaration, not a difference from the reference.
func declaredTargets(t *testing.T, dir string) []string {
	t.Helper()
	p, _, err := ir.Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range p.Targets {
		out = append(out, s.Value)
	}
	if len(out) == 0 {
		t.Fatalf("%s declares no target", dir)
	}
	return out
}
