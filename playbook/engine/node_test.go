//go:build unix

package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir/resolved"
)

// TestNodeSteps: a node step runs a script of the workspace with Node (its arguments as argv,
// stdin, output as a cli step's), under the same timeout, output cap and cwd confinement, and
// policy.box.cli must allow node.
func TestNodeSteps(t *testing.T) {
	wf := `name: n
steps:
  - id: sum
    command: node scripts/sum.mjs 2 40 '; touch pwned'
    stdin: "x"
    output: json
  - id: show
    command: cli printf %s $sum.json.total
`
	e, ws, file := setup(t, wf)
	os.MkdirAll(filepath.Join(ws, "scripts"), 0o755)
	os.WriteFile(filepath.Join(ws, "scripts/sum.mjs"), []byte(`
import { readFileSync } from "node:fs";
const stdin = readFileSync(0, "utf8");
const [a, b, c] = process.argv.slice(2);
console.log(JSON.stringify({ total: Number(a) + Number(b), stdin, third: c, cwd: process.cwd() }));
`), 0o644)
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
	if !env.OK || env.Output[1].Stdout != "42" || !strings.Contains(string(env.Output[0].JSON), `"third":"; touch pwned"`) || !strings.Contains(string(env.Output[0].JSON), `"stdin":"x"`) {
		t.Fatalf("%+v %+v", env.Error, env.Output)
	}
	if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
		t.Fatal("an argument ran as a command")
	}

	// A compiled step (gh-actions) runs a node step the same way.
	spec := StepSpec{ID: "sum", Namespace: "node", Argv: []string{"scripts/sum.mjs", "1", "2"}, Steps: []string{"sum"}, Output: "json"}
	if res, err := (&Engine{}).RunStep(context.Background(), spec, &Data{}, ws, nil); err != nil || !strings.Contains(string(res.JSON), `"total":3`) {
		t.Fatalf("a compiled node step: %+v %v", res, err)
	}

	// The same limits as a cli step: the timeout kills it, the cap fails it.
	os.WriteFile(filepath.Join(ws, "scripts/hang.js"), []byte("setInterval(() => {}, 1000)\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "scripts/flood.js"), []byte("process.stdout.write('x'.repeat(100000))\n"), 0o644)
	// The flood's timeout leaves a loaded machine time to start node: only the cap may end it.
	for script, c := range map[string]struct{ want, timeoutMs string }{
		"hang.js":  {"timed out", "500"},
		"flood.js": {"passed the cap of 1000 bytes", "120000"},
	} {
		want := c.want
		e, ws2, file := setup(t, "name: n\nsteps:\n  - id: s\n    command: node "+script+"\n    timeoutMs: "+c.timeoutMs+"\n")
		os.WriteFile(filepath.Join(ws2, script), []byte(readFile(t, filepath.Join(ws, "scripts", script))), 0o644)
		env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws2, MaxOutputBytes: 1000})
		if env.OK || !strings.Contains(env.Error.Message, want) {
			t.Errorf("%s: %+v", script, env.Error)
		}
	}

	// The script stays in the workspace: a symlink out is refused, and so is a script that is
	// not a file; policy.box.cli must allow node.
	outside := filepath.Join(t.TempDir(), "evil.js")
	os.WriteFile(outside, []byte("require('fs').writeFileSync('pwned', '')\n"), 0o644)
	os.Symlink(outside, filepath.Join(ws, "link.js"))
	for cmd, want := range map[string]string{"node link.js": "leaves the workspace", "node missing.js": "missing.js: no such file or directory"} {
		e, _, file := setup(t, "name: n\nsteps:\n  - id: s\n    command: "+cmd+"\n")
		env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
		if env.OK || !strings.Contains(env.Error.Message, want) {
			t.Errorf("%s: %+v", cmd, env.Error)
		}
	}
	e, ws, file = setup(t, "name: n\nsteps:\n  - id: s\n    command: node x.js\n")
	env = e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, CLI: &resolved.CLIPolicy{Allow: []string{"git"}}})
	if env.OK || !strings.Contains(strings.Join(env.Error.Diagnostics, "\n"), `wf.yml:4:14: step "s": the program "node" is not in policy.box.cli.allow [git]`) {
		t.Errorf("node outside the allow list: %+v", env.Error)
	}
	// Node missing: the step fails saying so.
	os.WriteFile(filepath.Join(ws, "x.js"), []byte("1\n"), 0o644)
	e.Env = []string{"PATH=" + t.TempDir()}
	env = e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
	if env.OK || !strings.Contains(env.Error.Message, "node is not on PATH: install Node.js") {
		t.Errorf("no node: %+v", env.Error)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
