package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/cliout/sariftest"
)

// sarifResults validates a SARIF log against the official SARIF 2.1.0 schema, parses it and
// returns its results' rule ids, levels and first locations.
func sarifResults(t *testing.T, out string) (ruleIDs, levels, uris []string) {
	t.Helper()
	if err := sariftest.Validate([]byte(out)); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var log struct {
		Version string
		Runs    []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Level     string
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil || log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("not a SARIF 2.1.0 log of one run (%v):\n%s", err, out)
	}
	for _, r := range log.Runs[0].Results {
		ruleIDs, levels = append(ruleIDs, r.RuleID), append(levels, r.Level)
		if len(r.Locations) > 0 {
			uris = append(uris, r.Locations[0].PhysicalLocation.ArtifactLocation.URI)
		}
	}
	return ruleIDs, levels, uris
}

func TestValidateFormatsGitHubAndSARIF(t *testing.T) {
	bad := "../../ir/testdata/bad/box-keep-bad-paths.yml"
	code, out, errOut := run(t, "validate", "--format", "github", bad)
	if code != 1 || strings.Count(out, "\n") != 3 || !strings.HasPrefix(out, "::error file="+bad+",line=12,col=14,title=autonomy profile::policy.box.autonomy.keep") ||
		!strings.Contains(errOut, "0 of 1 profile valid") {
		t.Errorf("github: exit %d\n%s%s", code, out, errOut)
	}
	warned := warnedHello(t) // two warnings: kubernetes's partial tasks:converse and gh-actions's maxConcurrent
	code, out, _ = run(t, "validate", "--format", "sarif", bad, warned)
	rules, levels, uris := sarifResults(t, out)
	if code != 1 || len(rules) != 5 || levels[0] != "error" || levels[3] != "warning" || uris[0] != bad || uris[3] != "file://"+filepath.ToSlash(warned)+"/ir.yml" || uris[4] != uris[3] {
		t.Errorf("sarif: exit %d, rules %v, levels %v, uris %v", code, rules, levels, uris)
	}
	if code, _, _ := run(t, "validate", "--format", "sarif", "../../profiles/hello"); code != 0 {
		t.Errorf("a valid profile in sarif: exit %d", code)
	}
}

func TestCheckFormatsGitHubAndSARIF(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := run(t, "compile", "../../profiles/hello", "--target", "local", "--dir", dir); code != 0 {
		t.Fatalf("compile: exit %d\n%s", code, errOut)
	}
	if err := os.Remove(filepath.Join(dir, ".autonomy", "policy.json")); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, "check", "../../profiles/hello", "--target", "local", "--dir", dir, "--format", "github")
	want := "::error file=" + filepath.ToSlash(dir) + "/.autonomy/policy.json,title=autonomy drift::missing: the profile generates it; run autonomy compile\n"
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("github: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "check", "../../profiles/hello", "--target", "local", "--dir", dir, "--format", "sarif")
	rules, levels, uris := sarifResults(t, out)
	if code != 1 || len(rules) < 1 || rules[0] != "drift" || levels[0] != "error" || uris[0] != "file://"+filepath.ToSlash(dir)+"/.autonomy/policy.json" {
		t.Errorf("sarif: exit %d, %v %v %v\n%s", code, rules, levels, uris, out)
	}
	if code, _, _ := run(t, "check", "../../profiles/hello", "--target", "local", "--dir", dir, "--format", "xml"); code != 2 {
		t.Errorf("an unknown format: exit %d", code)
	}
}

func TestCompileFormatJSON(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type report struct {
		Target, Dir, Failure string
		DryRun               bool
		Plan                 []struct{ Path, Op string }
		Conflicts            []struct{ Path, Problem, Hint string }
		Warnings             []struct{ Message string }
	}
	parse := func(out string) report {
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		return r
	}
	code, out, _ := run(t, "compile", "../../profiles/sdlc", "--target", "local", "--dir", dir, "--format", "json")
	r := parse(out)
	if code != 1 || r.Failure != "nothing was written" || len(r.Conflicts) != 1 || r.Conflicts[0].Path != ".gitignore" || len(r.Warnings) == 0 {
		t.Errorf("conflict: exit %d %+v", code, r)
	}
	code, out, _ = run(t, "compile", "../../profiles/sdlc", "--target", "local", "--dir", dir, "--format", "json", "--keep", ".gitignore")
	r = parse(out)
	ops := map[string]string{}
	for _, c := range r.Plan {
		ops[c.Path] = c.Op
	}
	if code != 0 || r.Target != "local" || r.DryRun || ops[".gitignore"] != "kept" || ops[".autonomy/local/runner.json"] != "create" || r.Failure != "" {
		t.Errorf("install: exit %d %+v", code, r)
	}
}

func TestDoctorFormatJSON(t *testing.T) {
	code, out, _ := run(t, "doctor", filepath.Join(t.TempDir(), "nothing"), "--format", "json")
	var rep struct {
		OK     bool
		Checks []struct {
			Name, Detail, Fix string
			OK                bool
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || rep.OK || len(rep.Checks) != 1 || rep.Checks[0].Name != "installation" || rep.Checks[0].Fix == "" {
		t.Errorf("exit %d, %v: %+v\n%s", code, err, rep, out)
	}
}
