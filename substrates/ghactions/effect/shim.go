package effect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/internal/shim"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
)

// ShimSession records the effects of the commands a model's shell runs (the gh and bun shims,
// autonomy runner launch) in a model job: the same session, check and safe-output file as its
// MCP server (autonomy gh mcp), so a refusal is immediate and the apply job checks them again.
type ShimSession struct {
	Installed *Installed
	Policy    Policy
	Actor     InstalledActor
	Session   string
	Outputs   string
}

// InModelJob reports whether the process runs in a model job's agent step: the step sets the
// safe-output file its effects are recorded in.
func InModelJob(getenv func(string) string) bool { return getenv("AUTONOMY_OUTPUTS") != "" }

// ShimSessionFromEnv reads what autonomy gh mcp reads, but no token: the actor
// (AUTONOMY_ACTOR) as installed at GITHUB_SHA in GITHUB_WORKSPACE, the session (GITHUB_RUN_ID)
// and the safe-output file (AUTONOMY_OUTPUTS).
func ShimSessionFromEnv(ctx context.Context, getenv func(string) string) (*ShimSession, error) {
	s := &ShimSession{Session: getenv("GITHUB_RUN_ID"), Outputs: getenv("AUTONOMY_OUTPUTS")}
	for name, v := range map[string]string{"AUTONOMY_OUTPUTS": s.Outputs, "GITHUB_RUN_ID": s.Session, "AUTONOMY_ACTOR": getenv("AUTONOMY_ACTOR")} {
		if v == "" {
			return nil, fmt.Errorf("%s is not set: this runs in a model job's agent step, which sets it", name)
		}
	}
	m, pol, a, err := installedActor(ctx, getenv)
	if err != nil {
		return nil, err
	}
	s.Installed, s.Policy, s.Actor = m, pol, a
	return s, nil
}

// Resolve turns a shim call into its effect's input: the actor of a `gh workflow run`'s
// workflow, the lifecycle state of a `gh issue edit`'s label.
func (s *ShimSession) Resolve(c shim.Call) (any, error) {
	switch {
	case c.Workflow != "":
		in := c.Input.(tools.LaunchInput)
		a, ok := s.workflowActor(c.Workflow)
		if !ok {
			return nil, &tools.Refused{Tool: tools.Launch, Reason: fmt.Sprintf("workflow %q is not the workflow of an actor of this fleet; launch an actor with the launch tool", c.Workflow)}
		}
		in.Actor = a
		return in, nil
	case c.Tool == tools.SetState:
		in := c.Input.(tools.StateChange)
		st, ok := s.stateOf(c.AddLabels[0])
		if !ok {
			return nil, &tools.Refused{Tool: tools.SetState, Reason: fmt.Sprintf("label %q is not a lifecycle state's label (%s); only a state moves through set_state, and no tool sets other labels", c.AddLabels[0], s.stateLabels())}
		}
		for _, l := range c.RemoveLabels {
			if _, ok := s.stateOf(l); !ok {
				return nil, &tools.Refused{Tool: tools.SetState, Reason: fmt.Sprintf("label %q is not a lifecycle state's label; no tool removes other labels", l)}
			}
		}
		in.State = st
		return in, nil
	}
	return c.Input, nil
}

// workflowActor finds the actor whose workflow w is (its file name, with or without .yml, or the
// actor's name).
func (s *ShimSession) workflowActor(w string) (string, bool) {
	for _, a := range s.Installed.Actors {
		base := path.Base(a.Workflow)
		if a.Workflow != "" && (w == base || w == strings.TrimSuffix(base, path.Ext(base)) || w == a.Workflow || w == a.Name) {
			return a.Name, true
		}
	}
	return "", false
}

// stateOf is the lifecycle state whose label is l (policy.box.taskStates; a state it does not
// map is its own label).
func (s *ShimSession) stateOf(l string) (string, bool) {
	for _, st := range ir.StateNames() {
		if s.Policy.label(st) == l {
			return st, true
		}
	}
	return "", false
}

func (s *ShimSession) stateLabels() string {
	var out []string
	for _, st := range ir.StateNames() {
		out = append(out, s.Policy.label(st))
	}
	return strings.Join(out, ", ")
}

// Record checks the effect against the actor's installed grants and the caps, counting what
// the session already recorded, and appends it to the safe-output file. A refusal is a
// *tools.Refused.
func (s *ShimSession) Record(tool string, input any) error {
	raw, err := json.Marshal(input)
	if err != nil {
		return err
	}
	c := &tools.Checker{Actor: s.Actor.Name, Grants: grants(s.Actor), Max: s.Policy.Box.GHActions.Tools.Max}
	if err := s.countRecorded(c); err != nil {
		return err
	}
	e := tools.Effect{Tool: tool, Actor: s.Actor.Name, Session: s.Session, Input: raw}
	if _, err := c.Check(e); err != nil {
		return err
	}
	out, err := tools.CreateOutputs(s.Outputs)
	if err != nil {
		return fmt.Errorf("safe outputs: %v", err)
	}
	defer out.Close()
	return out.Append(e)
}

// countRecorded runs the effects already recorded through c, so its caps count them.
func (s *ShimSession) countRecorded(c *tools.Checker) error {
	f, err := os.Open(s.Outputs)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("safe outputs: %v", err)
	}
	defer f.Close()
	es, err := tools.ReadOutputs(f)
	if err != nil {
		return fmt.Errorf("safe outputs %s: %v", s.Outputs, err)
	}
	for _, e := range es {
		_, _ = c.Check(e) // a refused one is not counted, as apply will not count it
	}
	return nil
}

// DispatchParam is the dispatch input of actor that takes source ("" for none).
func (m *Installed) DispatchParam(actor, source string) string {
	a, ok := m.Actor(actor)
	if !ok {
		return ""
	}
	inputs, _ := a.DispatchInputs()
	for _, p := range a.Params {
		if p.Source == source && slices.Contains(inputs, p.Name) {
			return p.Name
		}
	}
	return ""
}
