package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/substrates/registry"
)

// TestReservedPathsRefused: a behavior or resource that an install would put on a path autonomy
// owns is refused by validate, compile and check, at the position of the path, and nothing is
// written.
func TestReservedPathsRefused(t *testing.T) {
	cases := []struct {
		name     string
		behavior string // the actor's behavior (a file or skill folder created in the profile)
		resource string // a resource created in the profile, or ""
		want     string // the diagnostic, after "ir.yml:"
	}{
		{"behavior replaces the manifest", "gh-actions/manifest.json", "", `6:15: actor "a": behavior "gh-actions/manifest.json" would be installed at .autonomy/gh-actions/manifest.json, inside .autonomy/gh-actions/, which is reserved for the gh-actions manifest (rename`},
		{"behavior replaces the weave config", "weave.json", "", `6:15: actor "a": behavior "weave.json" would be installed at .autonomy/weave.json, which is reserved for the overlay weaving config`},
		{"behavior replaces the lifecycle map", "lifecycle.json", "", `6:15: actor "a": behavior "lifecycle.json" would be installed at .autonomy/lifecycle.json, which is reserved for the lifecycle map (rename`},
		{"behavior in the runner's state", "state/state.db", "", `6:15: actor "a": behavior "state/state.db" would be installed at .autonomy/state/state.db, inside .autonomy/state/, which is reserved for the local runner's state`},
		{"skill under generated/", "generated/x", "", `6:15: actor "a": behavior "generated/x" would be installed at .autonomy/generated/x, where autonomy cannot install: path is the writer's ledger directory .autonomy/generated`},
		{"behavior in the staging folders", "stage-1/run.sh", "", `6:15: actor "a": behavior "stage-1/run.sh" would be installed at .autonomy/stage-1/run.sh, where autonomy cannot install: path is inside the writer's staging folders`},
		{"skill folder holding a .git folder", "skills/x", "", `6:15: actor "a": behavior "skills/x" would be installed at .autonomy/skills/x/.git/config, where autonomy cannot install: path is inside a .git directory`},
		{"behavior over the launcher configs", "local", "", `6:15: actor "a": behavior "local" would be installed at .autonomy/local, which is reserved for the local runner's launcher configs, schedule and manifest`},
		{"resource under .git", "run.sh", ".git/hooks/pre-commit", `8:13: resource ".git/hooks/pre-commit" would be installed at .git/hooks/pre-commit, where autonomy cannot install: path is inside a .git directory`},
		{"resource over the manifest", "run.sh", ".autonomy/local/manifest.json", `8:13: resource ".autonomy/local/manifest.json" would be installed at .autonomy/local/manifest.json, inside .autonomy/local/, which is reserved for the local runner's launcher configs`},
		{"resource over a workflow", "run.sh", ".github/workflows/a.yml", `8:13: resource ".github/workflows/a.yml" would be installed at .github/workflows/a.yml, which is reserved for the workflow of actor a`},
		{"resource folder holding a workflow", "run.sh", ".github/workflows/a.yml:.github", `8:13: resource ".github" would be installed at .github/workflows/a.yml, which is reserved for the workflow of actor a`},
		{"resource folder holding the runner's state", "run.sh", ".autonomy/state/x:.autonomy", `8:13: resource ".autonomy" would be installed at .autonomy, where autonomy cannot install`},
		{"a resource folder next to the workflows is fine", "run.sh", ".github/ISSUE_TEMPLATE/bug.md:.github", ""},
		// The first case: each target's manifest now has its own folder, so a behavior
		// named manifest.json is just a file and replaces nothing.
		{"a behavior named manifest.json replaces no manifest", "manifest.json", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prof := t.TempDir()
			mk := func(rel, body string) {
				full := filepath.Join(prof, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if strings.Contains(c.behavior, ".") {
				mk(c.behavior, "#!/bin/sh\necho hi\n")
			} else {
				mk(c.behavior+"/SKILL.md", "# a skill\n")
				if strings.HasPrefix(c.name, "skill folder holding") {
					mk(c.behavior+"/.git/config", "[core]\n")
				}
			}
			src := "schema: autonomy.ir.v1\ntargets: [gh-actions, local]\nactors:\n  a:\n    capabilities: [tasks:converse]\n    behavior: " + c.behavior + "\n    triggers: [{ dispatch: true }]\n"
			if c.resource != "" {
				file, declared, _ := strings.Cut(c.resource, ":") // the file made, and the resource declared
				if declared == "" {
					declared = file
				}
				mk(file, "x\n")
				src += "resources: [" + declared + "]\n"
			}
			mk("ir.yml", src)
			if c.want == "" {
				if code, out, errOut := run(t, "validate", prof); code != 0 {
					t.Errorf("validate: exit %d\n%s%s", code, out, errOut)
				}
				dir := filepath.Join(t.TempDir(), "out")
				for _, target := range registry.Names() {
					if code, _, errOut := run(t, "compile", prof, "--target", target, "--out", dir); code != 0 {
						t.Fatalf("compile --target %s: exit %d\n%s", target, code, errOut)
					}
				}
				for _, target := range registry.Names() {
					if code, out, errOut := run(t, "check", prof, "--target", target, "--dir", dir); code != 0 {
						t.Errorf("check --target %s: exit %d\n%s%s", target, code, out, errOut)
					}
				}
				return
			}
			want := filepath.Join(prof, "ir.yml") + ":" + c.want
			code, out, _ := run(t, "validate", prof)
			if code != 1 || !strings.Contains(out, want) {
				t.Errorf("validate: exit %d, want 1 and\n%s\ngot:\n%s", code, want, out)
			}
			for _, target := range registry.Names() {
				dir := filepath.Join(t.TempDir(), "out")
				for _, args := range [][]string{{"compile", prof, "--target", target, "--out", dir}, {"check", prof, "--target", target, "--dir", dir}} {
					code, _, errOut := run(t, args...)
					if code != 1 || !strings.Contains(errOut, want) || strings.Contains(errOut, "a bug in the substrate") {
						t.Errorf("%s --target %s: exit %d, want 1 and\n%s\ngot:\n%s", args[0], target, code, want, errOut)
					}
				}
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("compile --target %s wrote %s", target, dir)
				}
			}
		})
	}
}

// TestReservedOverlayPackageRefused: the overlay package is installed at its folder's path under
// .autonomy/, so policy.box.overlays naming state, local or generated would put it among the
// runner's state, the launcher configs or the writer's ledgers: refused at the key, nothing
// written.
func TestReservedOverlayPackageRefused(t *testing.T) {
	overlay, err := os.ReadFile(filepath.Join("..", "..", "profiles", "librarian", "playbooks", "role", "librarian", "flag-contradictions.md"))
	if err != nil {
		t.Fatal(err)
	}
	for folder, want := range map[string]string{
		"state":     `9:15: policy.box.overlays "state": the overlay package would be installed at .autonomy/state, which is reserved for the local runner's state`,
		"local":     `9:15: policy.box.overlays "local": the overlay package would be installed at .autonomy/local, which is reserved for the local runner's launcher configs`,
		"generated": `9:15: policy.box.overlays "generated": the overlay package would be installed at .autonomy/generated, where autonomy cannot install`,
		"weave.d":   "",
	} {
		prof := t.TempDir()
		for rel, body := range map[string]string{
			"skills/a/SKILL.md":                       "# a\n",
			folder + "/role/a/flag-contradictions.md": string(overlay),
			"ir.yml": "schema: autonomy.ir.v1\ntargets: [gh-actions, local]\nactors:\n  a:\n    behavior: a\n    triggers: [{ dispatch: true }]\npolicy:\n  box:\n    overlays: " + folder + "\n",
		} {
			full := filepath.Join(prof, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		run(t, "playbook", "index", filepath.Join(prof, folder))
		dir := filepath.Join(t.TempDir(), "out")
		code, _, errOut := run(t, "compile", prof, "--target", "local", "--out", dir)
		if want == "" {
			if code != 0 {
				t.Errorf("%s: compile: exit %d\n%s", folder, code, errOut)
			}
			continue
		}
		want = filepath.Join(prof, "ir.yml") + ":" + want
		if code != 1 || !strings.Contains(errOut, want) || strings.Contains(errOut, "a bug in the substrate") {
			t.Errorf("%s: compile: exit %d, want 1 and\n%s\ngot:\n%s", folder, code, want, errOut)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s: compile wrote %s", folder, dir)
		}
		if code, out, _ := run(t, "validate", prof); code != 1 || !strings.Contains(out, want) {
			t.Errorf("%s: validate: exit %d\n%s", folder, code, out)
		}
	}
}
