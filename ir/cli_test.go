package ir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkBox checks a profile whose policy.box.KEY is value: the profile and its diagnostics.
func checkBox(t *testing.T, key, value string) (*Profile, string) {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "skills/a"), 0o755)
	os.WriteFile(filepath.Join(dir, "skills/a/SKILL.md"), []byte("# a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "ir.yml"), []byte("schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  a: { behavior: skills/a, triggers: [{ dispatch: true }] }\npolicy:\n  box:\n    "+key+": "+value+"\n"), 0o644)
	p, diags, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p, diags.String()
}

// TestBoxCLI: policy.box.cli is type-checked, each problem at its value, and read.
func TestBoxCLI(t *testing.T) {
	check := func(v string) (*Profile, string) { return checkBox(t, "cli", v) }
	p, diags := check("{ allow: [git, jq], deny: [rm] }")
	if diags != "" || p.Policy.CLI == nil || len(p.Policy.CLI.Allow) != 2 || p.Policy.CLI.Deny[0].Value != "rm" {
		t.Fatalf("%+v %s", p.Policy.CLI, diags)
	}
	for cli, want := range map[string]string{
		"{ allow: [] }":       `ir.yml:7:19: policy.box.cli.allow is empty`,
		"{ deny: [/bin/rm] }": `ir.yml:7:19: policy.box.cli.deny: "/bin/rm" is not a program name`,
		"{ allow: git }":      `ir.yml:7:19: policy.box.cli.allow must be a list`,
		"{ alow: [git] }":     `ir.yml:7:12: unknown key "alow" in policy.box.cli`,
		"[git]":               `ir.yml:7:10: policy.box.cli must be a mapping`,
	} {
		if _, diags := check(cli); !strings.Contains(diags, want) {
			t.Errorf("%s: want %q in\n%s", cli, want, diags)
		}
	}
}

// TestBoxWeb: policy.box.web is type-checked, each problem at its value, and read.
func TestBoxWeb(t *testing.T) {
	check := func(v string) (*Profile, string) { return checkBox(t, "web", v) }
	p, diags := check(`{ allow: [docs.example.com, "*.wikipedia.org"] }`)
	if diags != "" || p.Policy.Web == nil || len(p.Policy.Web.Allow) != 2 {
		t.Fatalf("%+v %s", p.Policy.Web, diags)
	}
	for web, want := range map[string]string{
		"{ allow: [] }":                  `ir.yml:7:19: policy.box.web.allow is empty`,
		`{ allow: ["https://x.com/a"] }`: `ir.yml:7:20: policy.box.web.allow: "https://x.com/a" is not a host`,
		"{ hosts: [x.com] }":             `unknown key "hosts" in policy.box.web`,
	} {
		if _, diags := check(web); !strings.Contains(diags, want) {
			t.Errorf("%s: want %q in\n%s", web, want, diags)
		}
	}
}
