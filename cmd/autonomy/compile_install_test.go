package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/buildinfo"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
)

// testCommit is the commit the workflows compiled by this package's tests install: a test
// binary has no VCS stamp, so no job could install it, and compile would refuse to write.
const testCommit = buildinfo.TestCommit

func init() {
	// Before TestMain, so that the processes the tests start as autonomy pin the same commit.
	ghactions.Self = ghactions.Tool{Repository: ghactions.Repository, Commit: testCommit}
}

// TestCompileRefusesUninstallable: a gh-actions install by a build that names nothing a job can
// install (no VCS stamp, a dirty tree) writes nothing and names the fix; a dry run warns.
func TestCompileRefusesUninstallable(t *testing.T) {
	saved := ghactions.Self
	t.Cleanup(func() { ghactions.Self = saved })
	for name, info := range map[string]buildinfo.Info{
		"no VCS stamp": {Module: ghactions.ModulePath, Version: "(devel)"},
		"dirty tree":   {Module: ghactions.ModulePath, Version: "(devel)", Commit: testCommit, Modified: true},
	} {
		t.Run(name, func(t *testing.T) {
			ghactions.Self = ghactions.ToolFor(info)
			out := filepath.Join(t.TempDir(), "repo")
			code, stdout, errOut := run(t, "compile", "../../profiles/hello", "--target", "gh-actions", "--out", out)
			if code != 1 || stdout != "" || !strings.Contains(errOut, "could not install this autonomy") || !strings.Contains(errOut, "nothing was written") {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, errOut)
			}
			if !strings.Contains(errOut, "rebuild autonomy") && !strings.Contains(errOut, "go build -buildvcs=true") {
				t.Errorf("the error names no fix:\n%s", errOut)
			}
			// It is reported where the profile asks for gh-actions (its policy.box entry), not at 1:1.
			if at := boxLine(t, "../../profiles/hello/ir.yml", "gh-actions"); !strings.Contains(errOut, fmt.Sprintf("ir.yml:%d:", at)) {
				t.Errorf("the error is not at policy.box.gh-actions (line %d):\n%s", at, errOut)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created", out)
			}
			code, _, errOut = run(t, "compile", "../../profiles/hello", "--target", "gh-actions", "--out", out, "--dry-run")
			if code != 0 || !strings.Contains(errOut, "warning: the gh-actions workflows' trusted jobs could not install this autonomy") {
				t.Fatalf("dry run: exit %d\nstderr: %s", code, errOut)
			}
			// The local target installs no autonomy: nothing to refuse.
			if code, _, errOut := run(t, "compile", "../../profiles/hello", "--target", "local", "--out", t.TempDir()); code != 0 || strings.Contains(errOut, "could not install") {
				t.Fatalf("local: exit %d\nstderr: %s", code, errOut)
			}
		})
	}
}

// TestCheckSaysWhyAnUninstallableBuildDrifts: check run by a build no job could install (a dirty
// tree) finds the workflows drifted, as they name another autonomy, and says first why: the
// warning compile refuses with, in text and in JSON.
func TestCheckSaysWhyAnUninstallableBuildDrifts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	if code, _, errOut := run(t, "compile", "../../profiles/hello", "--target", "gh-actions", "--dir", dir); code != 0 {
		t.Fatalf("compile: exit %d\n%s", code, errOut)
	}
	saved := ghactions.Self
	t.Cleanup(func() { ghactions.Self = saved })
	ghactions.Self = ghactions.ToolFor(buildinfo.Info{Module: ghactions.ModulePath, Version: "(devel)", Commit: testCommit, Modified: true})
	const why = "warning: the gh-actions workflows' trusted jobs could not install this autonomy: autonomy was built from commit " + testCommit + " with uncommitted changes"
	code, _, errOut := run(t, "check", "../../profiles/hello", "--target", "gh-actions", "--dir", dir)
	if code != 1 || !strings.Contains(errOut, why) {
		t.Errorf("check: exit %d\n%s", code, errOut)
	}
	code, out, _ := run(t, "check", "../../profiles/hello", "--target", "gh-actions", "--dir", dir, "--format", "json")
	if code != 1 || !strings.Contains(out, "could not install this autonomy") {
		t.Errorf("check --format json: exit %d\n%s", code, out)
	}
	ghactions.Self = saved
	if code, _, errOut := run(t, "check", "../../profiles/hello", "--target", "gh-actions", "--dir", dir); code != 0 || strings.Contains(errOut, "could not install") {
		t.Errorf("check by the build that compiled it: exit %d\n%s", code, errOut)
	}
}

// boxLine is the line of path that opens policy.box's entry for name.
func boxLine(t *testing.T, path, name string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), name+":") {
			return i + 1
		}
	}
	t.Fatalf("%s has no %s: entry", path, name)
	return 0
}
