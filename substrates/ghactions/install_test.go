package ghactions

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/buildinfo"
	"github.com/autonomyhq/autonomy/ir"
)

const (
	commitA = "0123456789abcdef0123456789abcdef01234567"
	commitB = "89abcdef0123456789abcdef0123456789abcdef"
)

// TestToolFor: what the jobs install follows from how the compiling autonomy was built; a build
// that names nothing a job can fetch carries the problem and its fix.
func TestToolFor(t *testing.T) {
	cases := []struct {
		name    string
		info    buildinfo.Info
		want    Tool
		problem string
	}{
		{"release", buildinfo.Info{Module: ModulePath, Release: "v1.2.3", Version: "v1.2.3", Commit: commitA}, Tool{Release: "v1.2.3", Repository: Repository, Commit: commitA}, ""},
		{"go install module@version", buildinfo.Info{Module: ModulePath, Version: "v1.2.3", Sum: "h1:abc="}, Tool{Module: ModulePath, Version: "v1.2.3", Sum: "h1:abc="}, ""},
		{"clean clone", buildinfo.Info{Module: ModulePath, Version: "v0.0.0-20260101000000-0123456789ab", Commit: commitA}, Tool{Repository: Repository, Commit: commitA}, ""},
		{"dirty tree", buildinfo.Info{Module: ModulePath, Version: "(devel)", Commit: commitA, Modified: true}, Tool{}, "uncommitted changes"},
		{"dirty release", buildinfo.Info{Module: ModulePath, Release: "v1.2.3", Commit: commitA, Modified: true}, Tool{}, "uncommitted changes"},
		{"no VCS stamp", buildinfo.Info{Module: ModulePath, Version: "(devel)"}, Tool{}, "go build -buildvcs=true"},
		{"no build info", buildinfo.Info{}, Tool{}, "without a VCS stamp"},
		{"a short commit stamped with -ldflags", buildinfo.Info{Module: ModulePath, Commit: commitA[:12]}, Tool{}, "not a full commit SHA"},
		{"another module", buildinfo.Info{Module: "example.com/other", Commit: commitA}, Tool{}, "install autonomy itself"},
	}
	for _, c := range cases {
		got := ToolFor(c.info)
		if c.problem != "" {
			if !strings.Contains(got.Problem, c.problem) || got.Commit != "" || got.Sum != "" || got.Release != "" {
				t.Errorf("%s: got %+v, want a problem saying %q", c.name, got, c.problem)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// installStepOf compiles a proposer (with box, a policy.box.gh-actions mapping, or "") by tool
// and returns its propose job's install step, read from the workflow, and the output.
func installStepOf(t *testing.T, tool Tool, box string) (step, []byte) {
	t.Helper()
	y := agent("code:propose", dispatchRef)
	if box != "" {
		y += "policy:\n  box:\n    gh-actions: " + box + "\n"
	}
	p, diags, err := ir.Check(profile(t, y))
	if err != nil || diags.HasErrors() {
		t.Fatalf("profile invalid: %v\n%s", err, diags)
	}
	out, err := Substrate{Tool: &tool}.Compile(resolve(p))
	if err != nil {
		t.Fatal(err)
	}
	data := []byte(file(t, out, WorkflowPath("a")))
	var wf struct {
		Jobs map[string]struct{ Steps []step }
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	for _, s := range wf.Jobs["propose"].Steps {
		if s.Name == installStepName {
			return s, data
		}
	}
	t.Fatal("the propose job has no install step")
	return step{}, nil
}

// step is a workflow step as the tests read it.
type step struct {
	Name string
	Env  map[string]string
	Run  string
}

// TestInstallStepKinds: each way of installing autonomy gets the env its script reads, and
// every script passes actionlint with shellcheck.
func TestInstallStepKinds(t *testing.T) {
	shellcheck := shellcheckPath(t)
	defer skipShellcheck(t, shellcheck)
	cases := map[string]struct {
		tool Tool
		env  map[string]string
	}{
		"source":  {Tool{Repository: Repository, Commit: commitA}, map[string]string{"AUTONOMY_REPOSITORY": Repository, "AUTONOMY_COMMIT": commitA}},
		"release": {Tool{Release: "v1.2.3", Repository: Repository, Commit: commitA}, map[string]string{"AUTONOMY_REPOSITORY": Repository, "AUTONOMY_RELEASE": "v1.2.3", "AUTONOMY_COMMIT": commitA}},
		"module":  {Tool{Module: ModulePath, Version: "v1.2.3", Sum: "h1:abc="}, map[string]string{"AUTONOMY_MODULE": ModulePath, "AUTONOMY_VERSION": "v1.2.3", "AUTONOMY_SUM": "h1:abc=", "GONOSUMDB": ModulePath}},
		"problem": {ToolFor(buildinfo.Info{}), map[string]string{"AUTONOMY_PROBLEM": ToolFor(buildinfo.Info{}).Problem}},
	}
	for name, c := range cases {
		s, data := installStepOf(t, c.tool, "")
		if len(s.Env) != len(c.env) {
			t.Errorf("%s: env %v, want %v", name, s.Env, c.env)
		}
		for k, v := range c.env {
			if s.Env[k] != v {
				t.Errorf("%s: %s=%q, want %q", name, k, s.Env[k], v)
			}
		}
		l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{Shellcheck: shellcheck})
		if err != nil {
			t.Fatal(err)
		}
		errs, err := l.Lint("a.yml", data, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range errs {
			t.Errorf("%s: %d:%d: %s [%s]", name, e.Line, e.Column, e.Message, e.Kind)
		}
	}
}

// TestBoxAutonomy: policy.box.gh-actions.autonomy names the repository (a fork, a mirror) and
// the commit the jobs build; a ref that is not the compiling build's commit is warned about.
func TestBoxAutonomy(t *testing.T) {
	const fork = "https://git.example/fork/autonomy"
	built := Tool{Repository: Repository, Commit: commitA}
	s, _ := installStepOf(t, built, "{ autonomy: { repository: \""+fork+"\" } }")
	if s.Env["AUTONOMY_REPOSITORY"] != fork || s.Env["AUTONOMY_COMMIT"] != commitA {
		t.Errorf("repository only: env %v, want the fork at the compiling commit", s.Env)
	}
	// The release's binary is not used when a repository is named: its commit is built there.
	s, _ = installStepOf(t, Tool{Release: "v1.2.3", Repository: Repository, Commit: commitA}, "{ autonomy: { repository: \""+fork+"\" } }")
	if s.Env["AUTONOMY_RELEASE"] != "" || s.Env["AUTONOMY_REPOSITORY"] != fork || s.Env["AUTONOMY_COMMIT"] != commitA {
		t.Errorf("release with a repository: env %v", s.Env)
	}
	// A ref pins even a build that names no commit.
	unstamped := ToolFor(buildinfo.Info{})
	y := agent("code:propose", dispatchRef) + "policy:\n  box:\n    gh-actions: { autonomy: { repository: \"" + fork + "\", ref: " + commitB + " } }\n"
	p, diags, err := ir.Check(profile(t, y))
	if err != nil || diags.HasErrors() {
		t.Fatalf("profile invalid: %v\n%s", err, diags)
	}
	out, err := Substrate{Tool: &unstamped}.Compile(resolve(p))
	if err != nil || len(out.Blockers) != 0 || len(out.Warnings) != 0 {
		t.Fatalf("a ref did not pin an unstamped build: %v %v %v", err, out.Blockers, out.Warnings)
	}
	// A ref other than the compiling commit: installed, with a warning.
	out, err = Substrate{Tool: &built}.Compile(resolve(p))
	if err != nil || !strings.Contains(out.Warnings.String(), "the jobs build commit "+commitB+", not commit "+commitA) {
		t.Fatalf("no warning for another commit: %v\n%s", err, out.Warnings)
	}
	// Without a ref, an unstamped build stays unfit to install, pointing at the setting.
	s, _ = installStepOf(t, unstamped, "{ autonomy: { repository: \""+fork+"\" } }")
	if s.Env["AUTONOMY_PROBLEM"] == "" {
		t.Errorf("an unstamped build with no ref installs %v", s.Env)
	}
}

// TestBoxAutonomyErrors: a ref that could move, an unknown key, a repository git would read as
// an option, each positioned.
func TestBoxAutonomyErrors(t *testing.T) {
	for box, want := range map[string]string{
		"{ autonomy: { ref: main } }":                       `11:36: policy.box.gh-actions.autonomy.ref: "main" is not a full commit SHA (write the full commit SHA, as git rev-parse main prints it`,
		"{ autonomy: { ref: " + commitA[:12] + " } }":       `is not a full commit SHA`,
		"{ autonomy: { repo: x } }":                         `11:31: policy.box.gh-actions.autonomy: unknown key "repo"`,
		"{ autonomy: { repository: \"--upload-pack=x\" } }": `autonomy.repository: "--upload-pack=x" is not a repository URL`,
		"{ autonomy: https://x }":                           `policy.box.gh-actions.autonomy must be a mapping`,
	} {
		y := agent("code:propose", dispatchRef) + "policy:\n  box:\n    gh-actions: " + box + "\n"
		_, err := compileErr(t, y)
		var diags ir.Diagnostics
		if !errors.As(err, &diags) || !strings.Contains(diags.Error(), want) {
			t.Errorf("%s:\n got: %v\nwant: %s", box, err, want)
		}
	}
}

// infoAt is a clean build of this module at commit ("": with no VCS stamp).
func infoAt(commit string) buildinfo.Info {
	return buildinfo.Info{Module: ModulePath, Version: "(devel)", Commit: commit}
}
