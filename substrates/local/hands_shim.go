package local

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/internal/mcpserver"
	"github.com/autonomyhq/autonomy/internal/shim"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
)

// The gh of a preset session's shell (docs/tools.md, "Skills that run gh"): the front of its
// PATH holds a gh that runs autonomy runner gh (and a bun that runs autonomy runner bun, for
// the reference's bun scripts/runner.ts launch), which reads the command line (package shim): a
// write it maps (gh issue comment, gh issue create, gh issue edit --add-label, gh workflow run)
// becomes the same tool call, with the same checks and caps, as the session's MCP server makes
// (Hands.Shim), realized the same way (on GitHub by the supervisor, for codeHost github); a
// write it does not map is refused naming the tool to use; a read runs the real gh only when
// the session holds a token to read with (policy.box.local.env), else it is refused.

// shimDir is, beside the autonomy link of a binary (selfBin), the folder holding its gh shim.
const shimDir = "shim"

// shimHeader starts the shims: ShimOnPath tells its folder by it.
const shimHeader = "#!/bin/sh\n# Written by the autonomy runner"

// ShimOnPath is the first folder of the PATH list path whose gh is the shim ("" when none): the
// real gh is the first one after it.
func ShimOnPath(path string) string {
	for _, d := range filepath.SplitList(path) {
		f, err := os.Open(filepath.Join(d, "gh"))
		if err != nil {
			continue
		}
		head := make([]byte, len(shimHeader))
		n, _ := io.ReadFull(f, head)
		f.Close()
		if string(head[:n]) == shimHeader {
			return d
		}
	}
	return ""
}

// shimNames are the programs of the shims' folder: gh, and bun for the reference's runner CLI
// (bun scripts/runner.ts launch …), each running autonomy runner NAME.
var shimNames = []string{"gh", "bun"}

// shimBin writes the shims that run this runner's binary and returns their folder.
func (r *Runner) shimBin() (string, error) {
	bin, err := r.selfBin()
	if err != nil {
		return "", err
	}
	exe, err := r.exe()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(bin, shimDir)
	for _, name := range shimNames {
		script := shimHeader + " (docs/tools.md, \"Skills that run gh\").\nexec " + shQuote(exe) + " runner " + name + " \"$@\"\n"
		if err := writeShim(dir, name, script); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// writeShim writes the shim name in dir, unless it already reads script.
func writeShim(dir, name, script string) error {
	path := filepath.Join(dir, name)
	if cur, err := os.ReadFile(path); err == nil && string(cur) == script {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot make the folder of the %s shim: %v", name, err)
	}
	// A new file renamed over the old one: a session starting meanwhile runs one or the other.
	tmp, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return fmt.Errorf("cannot write the %s shim: %v", name, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(script)
	cerr := tmp.Close()
	if err := firstErr(werr, cerr, os.Chmod(tmp.Name(), 0o755), os.Rename(tmp.Name(), path)); err != nil {
		return fmt.Errorf("cannot write the %s shim: %v", name, err)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// shQuote single-quotes a word for sh.
func shQuote(w string) string { return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'" }

// Shim realizes a write of the session's shell that package shim mapped: resolved (a workflow
// to its actor, a label to its lifecycle state), checked as the MCP server checks a tool call
// (capability, scope, input), and applied as one (Apply: the cap in the store, GitHub for
// codeHost github). It returns what the tool would return, for the shell to print.
func (h *Hands) Shim(ctx context.Context, s mcpserver.Session, c shim.Call) (any, error) {
	in, err := h.resolve(c)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	check := &tools.Checker{Actor: s.Actor, Grants: s.Grants, Max: s.Max,
		SessionActor: func(id string) (string, error) { return h.SessionActor(ctx, id) }}
	e := tools.Effect{Tool: c.Tool, Actor: s.Actor, Session: s.ID, Input: raw}
	checked, err := check.Check(e)
	if err != nil {
		return nil, err
	}
	if v, ok := checked.(*tools.LaunchInput); ok && c.Branch != "" {
		return h.launch(ctx, v, c.Branch) // bun scripts/runner.ts launch ACTOR --branch B
	}
	return h.Apply(ctx, e, checked)
}

// resolve turns a shim call into its tool's input: the actor of a gh workflow run, the
// lifecycle state of a gh issue edit's label.
func (h *Hands) resolve(c shim.Call) (any, error) {
	switch {
	case c.Workflow != "":
		in := c.Input.(tools.LaunchInput)
		name := strings.TrimSuffix(filepath.Base(c.Workflow), filepath.Ext(c.Workflow))
		if !slices.Contains(h.r.In.Runner.Actors, name) {
			return nil, &tools.Refused{Tool: tools.Launch, Reason: fmt.Sprintf("workflow %q is not an actor of this fleet (%s); launch an actor with the launch tool, or autonomy runner launch ACTOR",
				c.Workflow, strings.Join(h.r.In.Runner.Actors, ", "))}
		}
		in.Actor = name
		return in, nil
	case c.Tool == tools.SetState:
		in := c.Input.(tools.StateChange)
		st, ok := h.r.In.stateOf(c.AddLabels[0])
		if !ok {
			return nil, &tools.Refused{Tool: tools.SetState, Reason: fmt.Sprintf("label %q is not a lifecycle state's label; only a state moves, through set_state, and no tool sets other labels", c.AddLabels[0])}
		}
		for _, l := range c.RemoveLabels {
			if _, ok := h.r.In.stateOf(l); !ok {
				return nil, &tools.Refused{Tool: tools.SetState, Reason: fmt.Sprintf("label %q is not a lifecycle state's label; no tool removes other labels", l)}
			}
		}
		in.State = st
		return in, nil
	}
	return c.Input, nil
}

// stateOf is the lifecycle state whose tracker name is label.
func (in *Install) stateOf(label string) (string, bool) {
	for _, s := range ir.StateNames() {
		if in.stateLabel(s) == label {
			return s, true
		}
	}
	return "", false
}
