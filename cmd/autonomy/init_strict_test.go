package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/templates"
	"github.com/autonomyhq/autonomy/ir"
)

// strictExceptions are the warnings a template draws on a target it declares, keyed "TEMPLATE
// TARGET": each a real limit of that target for a feature the template needs, which README's
// "A strict CI and the templates" names. A strict CI of the template on that target fails with
// these, and only these; every other template passes validate --strict and check --strict on
// every target it declares.
var strictExceptions = map[string][]string{
	// The strategist's scoped capabilities (code:propose@roadmap, agent:launch@planner) are
	// enforced in part; GitHub cannot cap concurrent runs, so only the pm, which reads
	// maxConcurrent from the policy, keeps the fleet's WIP limit.
	"sdlc gh-actions": {"gh-actions partial capability:@scope", "gh-actions unsupported policy:maxConcurrent"},
	// The reviewer fires on GitHub events, which the local runner polls (not every event fires
	// locally); a code: scope reaches the agent as env only.
	"sdlc local": {"local partial trigger:event"},
	// The triage fires when an issue is opened, polled from GitHub by the local runner.
	"steps-triage local": {"local partial trigger:event"},
}

// TestInitTemplatesPassStrict: the profile `autonomy init --template T` writes, whole and
// narrowed to each of its targets, passes validate --strict, and, compiled into a repository
// holding the documents init's first steps write, check --strict on every target it keeps,
// but for strictExceptions, which fail with exactly their warnings.
func TestInitTemplatesPassStrict(t *testing.T) {
	for _, tp := range templates.List() {
		for _, target := range append([]string{""}, tp.Targets...) {
			repo := t.TempDir()
			dir := filepath.Join(repo, "autonomy")
			args := []string{"init", dir, "--template", tp.Name}
			keep := tp.Targets
			if target != "" {
				args, keep = append(args, "--target", target), []string{target}
			}
			if code, out, errOut := run(t, args...); code != 0 {
				t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
			}
			var want []string
			for _, tg := range keep {
				want = append(want, strictExceptions[tp.Name+" "+tg]...)
			}
			code, out, errOut := run(t, "validate", "--strict", dir)
			strictWarns(t, tp.Name+" "+target+": validate --strict", code, out+errOut, want)
			writeDocuments(t, dir, repo)
			for _, tg := range keep {
				if code, _, errOut := run(t, "compile", dir, "--target", tg, "--dir", repo); code != 0 {
					t.Fatalf("compile %s --target %s: exit %d\n%s", tp.Name, tg, code, errOut)
				}
				code, out, errOut := run(t, "check", "--strict", dir, "--target", tg, "--dir", repo)
				strictWarns(t, tp.Name+" "+target+": check --strict --target "+tg, code, out+errOut, strictExceptions[tp.Name+" "+tg])
			}
		}
	}
}

// TestBundledProfilesPassStrict: each profile of profiles/ passes validate --strict, but for
// the strictExceptions of the targets it declares.
func TestBundledProfilesPassStrict(t *testing.T) {
	for _, tp := range templates.List() {
		var want []string
		for _, tg := range tp.Targets {
			want = append(want, strictExceptions[tp.Name+" "+tg]...)
		}
		code, out, errOut := run(t, "validate", "--strict", filepath.Join("../../profiles", tp.Name))
		strictWarns(t, "profiles/"+tp.Name+": validate --strict", code, out+errOut, want)
	}
}

// TestStrictExceptionsAreDocumented: README's "A strict CI and the templates" has a bullet for
// every template and target of strictExceptions, naming every warning it fails with.
func TestStrictExceptionsAreDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n#### A strict CI and the templates\n")
	section, _, _ = strings.Cut(section, "\n#")
	for key, warnings := range strictExceptions {
		name, target, _ := strings.Cut(key, " ")
		_, bullet, ok := strings.Cut(section, "\n- `"+name+"` on "+target+": ")
		bullet, _, _ = strings.Cut(bullet, "\n- ")
		for _, w := range warnings {
			if w = strings.TrimPrefix(w, target+" "); !ok || !strings.Contains(strings.Join(strings.Fields(bullet), " "), "`"+w+"`") {
				t.Errorf("README's \"A strict CI and the templates\" has no bullet \"- `%s` on %s: \" naming `%s`", name, target, w)
			}
		}
	}
}

// strictWarns checks a strict command's exit code and output: 0 and no warning when want is
// empty, else 1 with exactly the warnings want names.
func strictWarns(t *testing.T, what string, code int, out string, want []string) {
	t.Helper()
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, ": warning: ") {
			got = append(got, line)
		}
	}
	wantCode := 0
	if len(want) > 0 {
		wantCode = 1
	}
	missing := slices.ContainsFunc(want, func(w string) bool {
		return !slices.ContainsFunc(got, func(line string) bool { return strings.Contains(line, w) })
	})
	if code != wantCode || len(got) != len(want) || missing {
		t.Errorf("%s: exit %d with %d warnings, want %d with %q\n%s", what, code, len(got), wantCode, want, out)
	}
}

// writeDocuments writes, in repo, the governing documents the profile of dir names, as init's
// first steps have the user write them.
func writeDocuments(t *testing.T, dir, repo string) {
	t.Helper()
	p, _, err := ir.Check(dir)
	if err != nil || p == nil {
		t.Fatalf("%s: %v", dir, err)
	}
	if p.Documents == nil {
		return
	}
	for _, r := range p.Documents.Roles {
		path := filepath.Join(repo, filepath.FromSlash(r.Path.Value))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("# "+r.Name.Value+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
