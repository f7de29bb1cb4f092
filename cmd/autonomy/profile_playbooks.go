package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/autonomyhq/autonomy/internal/gcfloor"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/substrates"
)

// checkProfile is ir.Check and then the playbooks the profile uses (playbook behaviors, the
// overlay package), each diagnostic at its own file: validate, compile and check all read a
// profile through it, resolved once (playbook.Resolve) for every target it compiles to. A profile
// with ir errors is not resolved further than its overlay folder, which reservedPaths checks.
func checkProfile(path string) (*resolved.Profile, ir.Diagnostics, error) {
	expectHeap(path)
	p, diags, err := ir.Check(path)
	if p == nil {
		return nil, diags, err
	}
	if err != nil || diags.HasErrors() {
		r := resolved.Of(p)
		r.OverlayFolder, r.OverlayFolderPos = playbook.OverlayFolder(p)
		return r, diags, err
	}
	r, pd := playbook.Resolve(p)
	diags = append(diags, pd...)
	// Said once per behavior. A workflow playbook is run by the runtime itself (locally by the
	// runner, on gh-actions as the actor's workflow); a step playbook by the local runner, step
	// by step. Any other playbook is handed to the agent as its instructions, as a skill.
	warned := map[string]bool{}
	for _, a := range p.Actors {
		f := r.Behavior(a).Kind
		if a.IsHuman() || warned[a.BehaviorFile] || f == resolved.Skill || f == resolved.Script || f == resolved.None {
			continue
		}
		warned[a.BehaviorFile] = true
		if f == resolved.Steps {
			// Both targets run it step by step: the local runner as the session, gh-actions
			// in the actor's agent job (docs/gh-actions.md, "Step playbooks").
			continue
		}
		if f == resolved.Workflow {
			// Both targets run it: the local runner as the session, gh-actions as the
			// actor's workflow (docs/gh-actions.md, "Workflow playbooks").
			continue
		}
		diags = append(diags, ir.Diagnostic{File: p.File, Pos: a.Behavior.Pos, Severity: ir.Warning,
			Message: fmt.Sprintf("actor %q: behavior %s is a %s playbook: the agent is handed it as its instructions, as a skill, and the runners do not yet run its steps, approvals or resume tokens themselves", a.Name.Value, a.BehaviorFile, f),
			Hint:    "the agent follows the playbook as written; a person (kind: human) can be given a capsule playbook as a task spec"})
	}
	return r, diags.Sort(), nil
}

// printIndexDrift prints the overlay index drift of `check` with how to fix it.
func printIndexDrift(out io.Writer, drifts []substrates.Drift, dir string) {
	for _, d := range drifts {
		path := filepath.ToSlash(filepath.Join(dir, d.Path))
		fix := "autonomy playbook index " + filepath.ToSlash(filepath.Dir(path))
		if d.Kind == substrates.Missing {
			fmt.Fprintf(out, "%s: missing: the profile's overlay package has no index; run %s\n", path, fix)
			continue
		}
		fmt.Fprintf(out, "%s: changed: the profile's overlay index is stale; run %s\n", path, fix)
		fmt.Fprint(out, d.Diff)
	}
}

// expectHeap tells the collector how much heap checking (and compiling) the profile at path
// will build, from its size (gcfloor.Expect: it acts only in a one-shot command, for a large
// profile). What it cannot read is left to ir.Check to report.
func expectHeap(path string) {
	file, err := ir.Locate(path)
	if err != nil {
		return
	}
	if info, err := os.Stat(file); err == nil && info.Mode().IsRegular() {
		gcfloor.Expect(min(info.Size(), ir.MaxFileSize) * gcfloor.HeapPerProfileByte)
	}
}
