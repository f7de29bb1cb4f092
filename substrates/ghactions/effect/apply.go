package effect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/autonomyhq/autonomy/internal/ghevent"
	"github.com/autonomyhq/autonomy/internal/ghwrite"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
	"github.com/autonomyhq/autonomy/substrates/ghactions/wire"
)

// The apply job (autonomy gh apply) realizes a model job's safe outputs. The model's job holds
// read permissions only; its MCP server records each effect it asks for as a line of the
// safe-output artifact. This job, which runs no model, reads that artifact as data, checks every
// effect again against the actor's capabilities and scopes as installed in the commit the run
// was triggered for (never the model's checkout), caps them per tool, and applies what passes
// with its own token; staged, it only reports what it would apply.

// Installed is what the apply job reads of the installation's manifest
// (.autonomy/gh-actions/manifest.json at the trusted commit).
type Installed struct {
	Actors []InstalledActor `json:"actors"`
}

// InstalledActor is one actor of the manifest.
type InstalledActor = wire.ManifestActor

// ReadInstalled decodes a manifest.
func ReadInstalled(data []byte) (*Installed, error) {
	var m Installed
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("manifest: %v", err)
	}
	return &m, nil
}

// Actor returns the installed actor of that name.
func (m *Installed) Actor(name string) (InstalledActor, bool) {
	i := slices.IndexFunc(m.Actors, func(a InstalledActor) bool { return a.Name == name })
	if i < 0 {
		return InstalledActor{}, false
	}
	return m.Actors[i], true
}

// grants are an installed actor's capabilities as tools grants ("agent:launch@develop" scoped).
func grants(a InstalledActor) []tools.Grant {
	out := make([]tools.Grant, 0, len(a.Capabilities))
	for _, c := range a.Capabilities {
		name, scope, _ := strings.Cut(c, "@")
		out = append(out, tools.Grant{Name: name, Scope: scope})
	}
	return out
}

// ApplyOptions are what one apply run reads besides the Env.
type ApplyOptions struct {
	// Outputs is the safe-output artifact of the model's job.
	Outputs io.Reader
	// Installed is the manifest at the trusted commit; Actor the actor whose run made Outputs
	// (from the workflow that ran, never from the artifact).
	Installed *Installed
	Actor     string
	// Session is the model job's run id.
	Session string
	// Max overrides tools.DefaultMax (policy.box.gh-actions.tools.max).
	Max map[string]int
	// Staged reports what would be applied and applies nothing.
	Staged bool
}

// Applied is the fate of one effect.
type Applied struct {
	Effect tools.Effect
	// Outcome says what was done (or, staged, what would be).
	Outcome string
	// Refused is set when the effect was refused, with the reason.
	Refused string
}

// Apply reads, checks and realizes the safe outputs of one run. An effect that is refused does
// not stop the others; an error reading the artifact or talking to GitHub does.
func (e *Env) Apply(ctx context.Context, o ApplyOptions) ([]Applied, error) {
	actor, ok := o.Installed.Actor(o.Actor)
	if !ok {
		return nil, fmt.Errorf("actor %q is not installed at this commit", o.Actor)
	}
	effects, err := tools.ReadOutputs(o.Outputs)
	if err != nil {
		return nil, fmt.Errorf("safe outputs: %w", err)
	}
	check := &tools.Checker{Actor: actor.Name, Grants: grants(actor), Max: o.Max,
		SessionActor: func(id string) (string, error) { return e.runActor(ctx, o.Installed, id) }}
	var out []Applied
	for _, ef := range effects {
		if ef.Session != o.Session {
			out = append(out, Applied{Effect: ef, Refused: fmt.Sprintf("recorded for session %q, not this run's %q", ef.Session, o.Session)})
			continue
		}
		in, err := check.Check(ef)
		if err != nil {
			out = append(out, Applied{Effect: ef, Refused: err.Error()})
			continue
		}
		a := Applied{Effect: ef}
		if n := targetItem(in); n > 0 {
			if paused, err := e.ItemPaused(ctx, n); err != nil {
				return append(out, Applied{Effect: ef, Refused: err.Error()}), err
			} else if paused {
				out = append(out, Applied{Effect: ef, Refused: e.pausedNote(n)}) // paused.go
				continue
			}
		}
		if a.Outcome, err = e.realize(ctx, o, in, o.Staged); err != nil {
			var r *tools.Refused
			switch {
			case errors.As(err, &r):
				a.Outcome, a.Refused = "", r.Reason
			case ghwrite.TargetRefused(err):
				// GitHub refused the target the model chose (no such item, a closed or locked
				// one): that effect is refused, the others still apply.
				a.Outcome, a.Refused = "", "GitHub refused it: "+err.Error()
			default:
				return append(out, Applied{Effect: ef, Refused: err.Error()}), err
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// realize applies one checked effect, or says what it would do when staged.
func (e *Env) realize(ctx context.Context, o ApplyOptions, in tools.Input, staged bool) (string, error) {
	switch v := in.(type) {
	case *tools.CommentInput:
		return e.repo().Comment(ctx, v, staged)
	case *tools.NewItem:
		return e.repo().CreateIssue(ctx, v, staged)
	case *tools.StateChange:
		return e.repo().SetState(ctx, v, staged)
	case *tools.LaunchInput:
		return e.applyLaunch(ctx, o.Installed, o.Actor, v, staged)
	case *tools.SessionRef:
		return e.applyCancel(ctx, v, staged)
	case *tools.SessionUpdate:
		return "", &tools.Refused{Tool: tools.UpdateSession, Reason: "GitHub cannot pause or resume a run; cancel it, or launch the actor again"}
	case *tools.Result:
		return fmt.Sprintf("result %s: %s", v.Status, v.Summary), nil
	case *tools.Ask:
		return e.applyAsk(ctx, o.Installed, v, staged)
	}
	return "", &tools.Refused{Tool: fmt.Sprintf("%T", in), Reason: "realized by its own trusted job on gh-actions, not by apply"}
}

// repo is the repository the apply job writes work items to.
func (e *Env) repo() ghwrite.Repo {
	return ghwrite.Repo{Client: e.Client, Owner: e.Owner, Name: e.Repo, Label: e.Policy.label}
}

// applyLaunch dispatches the target actor's workflow on the default branch with the launch's
// params as its inputs, the subject as its subject.ref param.
// A param bound to subject.actor or subject.actorRole is the substrate's to set: the agent's value
// is refused, the launching actor is sent as subject.actor, and the launched workflow resolves the
// role (NONE: a session launched it) from who dispatched.
func (e *Env) applyLaunch(ctx context.Context, m *Installed, caller string, v *tools.LaunchInput, staged bool) (string, error) {
	target, ok := m.Actor(v.Actor)
	if !ok {
		return "", &tools.Refused{Tool: tools.Launch, Reason: fmt.Sprintf("there is no actor %q in this installation", v.Actor)}
	}
	params, err := launchParams(target, caller, v)
	if err != nil {
		return "", err
	}
	// The correlation input carries the params, as a runner's launch does, so that any process
	// reads the session's params back from the run's title.
	corr, err := ghrun.Correlation(params)
	if err != nil {
		return "", &tools.Refused{Tool: tools.Launch, Reason: err.Error()}
	}
	inputs := map[string]any{wire.CorrelationInput: corr}
	for k, val := range params {
		inputs[k] = val
	}
	wf := path.Base(target.Workflow)
	if staged {
		return fmt.Sprintf("would dispatch %s", wf), nil
	}
	def, err := e.DefaultBranch(ctx)
	if err != nil {
		return "", err
	}
	if err := e.dispatch(ctx, wf, def, inputs); err != nil {
		return "", err
	}
	return fmt.Sprintf("dispatched %s on %s", wf, def), nil
}

// launchParams are the params a launch of target by caller dispatches: the agent's, each one
// target's dispatch trigger takes and none bound to subject.actor or subject.actorRole (those
// are refused), the subject as its subject.ref param, and caller as its subject.actor param.
func launchParams(target InstalledActor, caller string, v *tools.LaunchInput) (ir.LaunchParams, error) {
	allowed, ok := target.DispatchInputs()
	if !ok {
		return nil, &tools.Refused{Tool: tools.Launch, Reason: fmt.Sprintf("actor %q has no dispatch trigger, so nothing can launch it on GitHub", v.Actor)}
	}
	params := ir.LaunchParams{}
	for k, val := range v.Params {
		if !slices.Contains(allowed, k) {
			return nil, &tools.Refused{Tool: tools.Launch, Reason: fmt.Sprintf("actor %q takes no param %s (it takes: %s)", v.Actor, k, strings.Join(allowed, ", "))}
		}
		if src := target.Source(k); src == "subject.actor" || src == "subject.actorRole" {
			return nil, &tools.Refused{Tool: tools.Launch, Reason: fmt.Sprintf("param %s of actor %q is bound to %s, which the substrate sets (to the launching actor, and NONE for its role): drop it", k, v.Actor, src)}
		}
		params[k] = val
	}
	for _, p := range target.Params {
		if !slices.Contains(allowed, p.Name) {
			continue
		}
		switch {
		case p.Source == "subject.ref" && v.Subject != "":
			params[p.Name] = v.Subject
		case p.Source == "subject.actor" && caller != "":
			params[p.Name] = caller
		}
		if val, set := params[p.Name]; set && val != "" && p.Source == "subject.ref" {
			// It names the launched run's branch and concurrency group: one spelling per item.
			if _, err := ghevent.ItemNumber(val); err != nil {
				return nil, &tools.Refused{Tool: tools.Launch, Reason: fmt.Sprintf("the subject of actor %q (param %s): %v", v.Actor, p.Name, err)}
			}
		}
	}
	return params, nil
}

func (e *Env) applyCancel(ctx context.Context, v *tools.SessionRef, staged bool) (string, error) {
	id, err := strconv.ParseInt(v.Session, 10, 64)
	if err != nil {
		return "", &tools.Refused{Tool: tools.CancelSession, Reason: fmt.Sprintf("session %q is not a run id", v.Session)}
	}
	if staged {
		return fmt.Sprintf("would cancel run %d", id), nil
	}
	if _, err := e.Client.Actions.CancelWorkflowRunByID(ctx, e.Owner, e.Repo, id); err != nil {
		return "", err
	}
	return fmt.Sprintf("cancelled run %d", id), nil
}

// runActor is the actor whose workflow made run id, for the scope of a cancel.
func (e *Env) runActor(ctx context.Context, m *Installed, id string) (string, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return "", fmt.Errorf("%q is not a run id", id)
	}
	// go-github's WorkflowRun has no path: read the run's workflow file from the API's own field.
	req, err := e.Client.NewRequest("GET", fmt.Sprintf("repos/%s/%s/actions/runs/%d", e.Owner, e.Repo, n), nil)
	if err != nil {
		return "", err
	}
	var run struct {
		Path string `json:"path"`
	}
	if _, err := e.Client.Do(ctx, req, &run); err != nil {
		return "", err
	}
	for _, a := range m.Actors {
		if a.Workflow == run.Path {
			return a.Name, nil
		}
	}
	return "", fmt.Errorf("run %s is not an actor's run", id)
}
