//go:build unix

package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir/resolved"
)

const checked = `name: checked
steps:
  - id: list
    command: cli printf '{"items":[{"id":1},{"id":"two"}]}'
    schema:
      type: object
      required: [items]
      properties:
        items: { type: array, items: { type: object, required: [id], properties: { id: { type: integer } } } }
  - id: write
    command: cli sh -c 'echo done > out.txt; echo out.txt'
    postcondition: cli test -s $write.stdout
  - id: after
    command: cli touch after
`

// Seed 003: a step's explicit output schema is validated, the failing field named; a
// postcondition runs once its step succeeded, may read the step's own output, and its failure
// fails the step; nothing after a failed step runs.
func TestSchemaAndPostcondition(t *testing.T) {
	e, ws, file := setup(t, checked)
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
	if env.OK || env.Error.Step != "list" || !strings.Contains(env.Error.Message, `step "list": the output does not satisfy the step's schema: at /items/1/id: `) {
		t.Fatalf("a field against the schema: %+v", env.Error)
	}
	if _, err := os.Stat(filepath.Join(ws, "out.txt")); err == nil {
		t.Fatal("a step after the failed one ran")
	}

	e, ws, file = setup(t, strings.Replace(checked, `"id":"two"`, `"id":2`, 1))
	env = e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
	if !env.OK || len(env.Output) != 3 || string(env.Output[0].JSON) == "" {
		t.Fatalf("a valid output and a holding postcondition: %+v %+v", env.Error, env.Output)
	}

	// The postcondition fails: the step fails, naming it, and the next step does not run.
	e, ws, file = setup(t, strings.Replace(strings.Replace(checked, `"id":"two"`, `"id":2`, 1), "echo done > out.txt; ", "", 1))
	env = e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
	if env.OK || env.Error.Step != "write" || !strings.Contains(env.Error.Message, `postcondition "cli test -s $write.stdout" failed: test exited with status 1`) {
		t.Fatalf("a failing postcondition: %+v", env.Error)
	}
	if _, err := os.Stat(filepath.Join(ws, "after")); err == nil {
		t.Fatal("the step after a failed postcondition ran")
	}
	if env.Output[1].Status != "failed" {
		t.Errorf("the step's record: %+v", env.Output[1])
	}
}

// TestRunStepSchemaAndPostcondition: a compiled step (gh-actions) is held to its schema and its
// postcondition as the engine holds a run's.
func TestRunStepSchemaAndPostcondition(t *testing.T) {
	ws := t.TempDir()
	schema := json.RawMessage(`{"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}`)
	spec := StepSpec{ID: "a", Namespace: "cli", Argv: []string{"printf", `{"n": "x"}`}, Steps: []string{"a"}, Schema: schema}
	if _, err := (&Engine{}).RunStep(context.Background(), spec, &Data{}, ws, nil); err == nil || !strings.Contains(err.Error(), `the output does not satisfy the step's schema: at /n: `) {
		t.Fatalf("schema: %v", err)
	}
	// A key written twice, or a case twin: which one a later step reads is unclear, so it is refused.
	for _, out := range []string{`{"n": "x", "n": 1}`, `{"n": 1, "N": "x"}`} {
		spec.Argv = []string{"printf", out}
		if _, err := (&Engine{}).RunStep(context.Background(), spec, &Data{}, ws, nil); err == nil || !strings.Contains(err.Error(), "write each key once") {
			t.Fatalf("%s: %v", out, err)
		}
	}
	spec.Argv = []string{"printf", `{"n": 1}`}
	spec.Postcondition = &resolved.Command{Namespace: "cli", Argv: []string{"test", "-e", "missing"}}
	if _, err := (&Engine{}).RunStep(context.Background(), spec, &Data{}, ws, nil); err == nil || !strings.Contains(err.Error(), `postcondition "cli test -e missing" failed`) {
		t.Fatalf("postcondition: %v", err)
	}
	spec.Postcondition.Argv = []string{"test", "-d", "."}
	if res, err := (&Engine{}).RunStep(context.Background(), spec, &Data{}, ws, nil); err != nil || res.Status != "ok" {
		t.Fatalf("holding: %+v %v", res, err)
	}
	spec.Schema = json.RawMessage(`{not json`)
	if _, err := (&Engine{}).RunStep(context.Background(), spec, &Data{}, ws, nil); err == nil || !strings.Contains(err.Error(), "not a JSON Schema") {
		t.Fatalf("a broken schema: %v", err)
	}
}

// TestCLIPolicy: policy.box.cli (Request.CLI, --cli-allow/--cli-deny) refuses a program written
// in a step before anything runs, at its command; one taken from an arg when the step runs
// (a path matched by its last element); the same in a compiled step; a resumed run keeps it.
func TestCLIPolicy(t *testing.T) {
	pol := &resolved.CLIPolicy{Allow: []string{"sh", "touch"}, Deny: []string{"rm"}}
	e, ws, file := setup(t, "name: p\nsteps:\n  - id: a\n    command: cli touch one\n  - id: b\n    command: cli rm one\n")
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, CLI: pol})
	if env.OK || len(env.Error.Diagnostics) != 1 || !strings.Contains(env.Error.Diagnostics[0], `wf.yml:6:14: step "b": the program "rm" is denied by policy.box.cli.deny`) {
		t.Fatalf("a denied program: %+v", env.Error)
	}
	if _, err := os.Stat(filepath.Join(ws, "one")); err == nil {
		t.Fatal("a step ran although the workflow was refused")
	}
	e, ws, file = setup(t, "name: p\nargs:\n  tool: {}\nsteps:\n  - id: gate\n    command: cli touch gate\n    approval: required\n  - id: a\n    command: cli $args.tool made\n")
	for tool, want := range map[string]string{"/bin/rm": `the program "rm" is denied by policy.box.cli.deny`, "env": `the program "env" is not in policy.box.cli.allow [sh, touch]`} {
		env = e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, CLI: pol, ArgsJSON: `{"tool": "` + tool + `"}`})
		if env.Status != StatusNeedsApproval {
			t.Fatalf("%+v", env)
		}
		env = e.Resume(context.Background(), env.RequiresApproval.ResumeToken, true)
		if env.OK || env.Error.Step != "a" || !strings.Contains(env.Error.Message, want) {
			t.Errorf("%s after a resume: %+v", tool, env.Error)
		}
	}
	spec := StepSpec{ID: "a", Namespace: "cli", Argv: []string{"rm", "-f", "x"}, Steps: []string{"a"}, CLI: pol}
	if _, err := (&Engine{}).RunStep(context.Background(), spec, &Data{}, t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "denied by policy.box.cli.deny") {
		t.Fatalf("a compiled step: %v", err)
	}
}
