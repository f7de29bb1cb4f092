package ir

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseShebang(t *testing.T) {
	cases := map[string][]string{
		"/bin/sh":                    {"/bin/sh"},
		" /bin/sh -eu ":              {"/bin/sh", "-eu"},
		"/usr/bin/env bun":           {"/usr/bin/env", "bun"},
		"/usr/bin/env -S node --foo": {"/usr/bin/env", "-S node --foo"},
		"/bin/bash\t-e":              {"/bin/bash", "-e"},
		"":                           nil,
	}
	for line, want := range cases {
		if got := ParseShebang(line); !reflect.DeepEqual(got, want) {
			t.Errorf("ParseShebang(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestScriptProgram(t *testing.T) {
	cases := map[string]string{
		"/bin/sh -eu":                    "/bin/sh",
		"/usr/bin/env bun":               "bun",
		"/usr/bin/env -S node --no-warn": "node",
		"/usr/bin/env FOO=1 python3":     "python3",
		"/usr/bin/env":                   "/usr/bin/env",
	}
	for line, want := range cases {
		if got := (ScriptRun{Shebang: ParseShebang(line)}).Program(); got != want {
			t.Errorf("Program(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestNodeStripsTypes(t *testing.T) {
	for v, want := range map[string]bool{"v20.19.0": false, "v22.5.1": false, "v22.6.0": true, "v23.0.0": true, "v24.1.0\n": true, "": false, "garbage": false} {
		if got := NodeStripsTypes(v); got != want {
			t.Errorf("NodeStripsTypes(%q) = %v, want %v", v, got, want)
		}
	}
}

// fakeHost is a machine with the given programs on PATH and a node of the given version.
func fakeHost(programs ...string) func(string) (string, error) {
	return func(name string) (string, error) {
		for _, p := range programs {
			if p == name || filepath.Base(p) == name && !strings.Contains(name, "/") {
				return "/opt/bin/" + filepath.Base(p), nil
			}
		}
		return "", errors.New("not found")
	}
}

func TestScriptArgv(t *testing.T) {
	node := func(v string) func(string) (string, error) { return func(string) (string, error) { return v, nil } }
	cases := []struct {
		name    string
		run     ScriptRun
		look    func(string) (string, error)
		version string
		want    []string
		err     string
	}{
		{"sh", ScriptRun{Ext: ".sh"}, fakeHost("sh"), "", []string{"/opt/bin/sh", "s"}, ""},
		{"js", ScriptRun{Ext: ".mjs"}, fakeHost("node"), "", []string{"/opt/bin/node", "s"}, ""},
		{"js without node", ScriptRun{Ext: ".js"}, fakeHost("sh"), "", nil, "install Node.js"},
		{"ts with bun", ScriptRun{Ext: ".ts"}, fakeHost("bun", "node"), "v24.0.0", []string{"/opt/bin/bun", "s"}, ""},
		{"ts with a new node", ScriptRun{Ext: ".ts"}, fakeHost("node"), "v22.6.0", []string{"/opt/bin/node", NodeTypeStripping, "s"}, ""},
		{"ts with an old node", ScriptRun{Ext: ".ts"}, fakeHost("node"), "v20.19.0", nil, "node v20.19.0 is too old to run TypeScript: install Bun"},
		{"ts with nothing", ScriptRun{Ext: ".ts"}, fakeHost(), "", nil, "tried bun, node): install Bun"},
		{"shebang env", ScriptRun{Shebang: []string{"/usr/bin/env", "bun"}}, fakeHost("/usr/bin/env", "bun"), "", []string{"/usr/bin/env", "bun", "s"}, ""},
		{"shebang env, missing program", ScriptRun{Shebang: []string{"/usr/bin/env", "bun"}}, fakeHost("/usr/bin/env"), "", nil, "runs bun, which is not on PATH: install Bun (https://bun.sh)"},
		{"shebang, missing interpreter", ScriptRun{Shebang: []string{"/usr/local/bin/python3"}}, fakeHost(), "", nil, "interpreter /usr/local/bin/python3 is not installed: install Python 3"},
	}
	for _, c := range cases {
		got, err := c.run.Argv("s", c.look, node(c.version))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err = %v, want it to say %q", c.name, err, c.err)
			}
			// Node.js is an alternative only where the extension, not a #! line, chose Bun.
			if err != nil && len(c.run.Shebang) > 0 && strings.Contains(err.Error(), "Node.js") {
				t.Errorf("%s: a #! line naming bun cannot run with node: %v", c.name, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Argv = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func TestFrontmatterName(t *testing.T) {
	cases := []struct {
		src  string
		name string
		line int
		ok   bool
	}{
		{"---\nname: draft\n---\nbody", "draft", 2, true},
		{"---\r\ndescription: x\r\nname: 'draft'\r\n---\r\n", "draft", 3, true},
		{"\ufeff---\nname: a\n...\n", "a", 2, true},
		{"# no frontmatter\nname: x\n", "", 0, false},
		{"---\nname: x\n", "", 0, false},              // never closed
		{"---\n[not a mapping]\n---\n", "", 0, false}, // not a mapping
		{"---\nname: [a]\n---\n", "", 0, false},       // not a scalar
	}
	for _, c := range cases {
		name, line, ok := frontmatterName([]byte(c.src))
		if name != c.name || line != c.line || ok != c.ok {
			t.Errorf("frontmatterName(%q) = %q, %d, %v; want %q, %d, %v", c.src, name, line, ok, c.name, c.line, c.ok)
		}
	}
}

// TestBehaviorReadings: a bare name is the skill skills/NAME, else a folder or script at the root;
// a script records how it runs.
func TestBehaviorReadings(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, data string) {
		full := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("skills/draft/SKILL.md", "---\nname: draft\n---\n")
	write("review/SKILL.md", "# a root-level skill folder\n")
	write("run.sh", "echo hi\n")
	write("scripts/ask.ts", "console.log('hi')\n")
	write("scripts/tool", "#!/usr/bin/env python3\nprint('hi')\n")
	write("humans/approver.md", "Approve it.\n")
	write("docs/guide.md", "# a docs folder sharing no skill's name\n")
	write("skills/docs/SKILL.md", "---\nname: docs\n---\n")
	write("ir.yml", `schema: autonomy.ir.v1
targets: [local]
agents:
  draft: { behavior: draft, triggers: [{ dispatch: true }] }
  review: { behavior: review, triggers: [{ dispatch: true }] }
  runner: { behavior: run.sh, triggers: [{ dispatch: true }] }
  ask: { behavior: scripts/ask.ts, triggers: [{ dispatch: true }] }
  tool: { behavior: scripts/tool, triggers: [{ dispatch: true }] }
  docs: { behavior: docs, triggers: [{ dispatch: true }] }
  approver: { kind: human, behavior: humans/approver.md, triggers: [{ dispatch: true }] }
`)
	p, diags, err := Check(dir)
	if err != nil || len(diags) != 0 {
		t.Fatalf("%v\n%s", err, diags)
	}
	want := map[string]struct {
		file   string
		skill  bool
		script *ScriptRun
	}{
		"draft":    {"skills/draft/SKILL.md", true, nil},
		"review":   {"review/SKILL.md", true, nil},
		"runner":   {"run.sh", false, &ScriptRun{Ext: ".sh"}},
		"ask":      {"scripts/ask.ts", false, &ScriptRun{Ext: ".ts"}},
		"tool":     {"scripts/tool", false, &ScriptRun{Shebang: []string{"/usr/bin/env", "python3"}}},
		"docs":     {"skills/docs/SKILL.md", true, nil},
		"approver": {"humans/approver.md", false, nil},
	}
	for name, w := range want {
		a := p.Actor(name)
		if a.BehaviorFile != w.file || a.Skill != w.skill || !reflect.DeepEqual(a.Script, w.script) {
			t.Errorf("%s: file %q skill %v script %+v; want %q %v %+v", name, a.BehaviorFile, a.Skill, a.Script, w.file, w.skill, w.script)
		}
	}
}
