package stepsrun

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/engine"
	"github.com/autonomyhq/autonomy/playbook/steps"
)

// unit is one invocation in order: a step (its prompt with the taken arms' text) or a sub-step.
type unit struct {
	*steps.Step
	prompt string
	skip   string // why it does not run: a branch not taken
}

// plan lists the units of step s with the variables known before it.
func plan(s *steps.Step, vars func(string) string) []unit {
	units := []unit{{Step: s, prompt: s.Prompt}}
	taken := false
	for _, b := range s.Branches {
		if b.Kind == "if" {
			taken = false // a new block
		}
		why := ""
		switch {
		case taken:
			why = "an earlier arm of the branch was taken"
		case b.Kind != "else" && !holds(b, vars(b.Var.Value)):
			why = fmt.Sprintf("%s %s %q is false", b.Var.Value, b.Op, b.Value)
		default:
			taken = true
			if b.Prompt != "" {
				units[0].prompt = join(units[0].prompt, b.Prompt)
			}
		}
		for _, sub := range b.Steps {
			units = append(units, unit{Step: sub, prompt: sub.Prompt, skip: why})
		}
	}
	return units
}

func holds(b *steps.Branch, v string) bool {
	return (v == b.Value) == (b.Op == "==")
}

// find is the step or sub-step labelled label.
func find(p *steps.Playbook, label string) *steps.Step {
	if p == nil {
		return nil
	}
	for _, s := range p.Steps {
		if s.Label == label {
			return s
		}
		for _, b := range s.Branches {
			for _, sub := range b.Steps {
				if sub.Label == label {
					return sub
				}
			}
		}
	}
	return nil
}

// run executes p from where st is: a step recorded is not run again.
func (r *Runner) run(ctx context.Context, p *steps.Playbook, st *state) Envelope {
	done := map[string]bool{}
	for _, rec := range st.Records {
		done[rec.Step] = true
	}
	vars := func(name string) string { return lookup(st, name) }
	for _, s := range p.Steps {
		for _, u := range plan(s, vars) {
			if done[u.Label] {
				continue
			}
			if err := ctx.Err(); err != nil {
				return r.failed(st, u.Label, "the run was stopped: %v", err)
			}
			rec := Record{Step: u.Label, Title: u.Title.Value, Status: "ok"}
			if u.skip != "" {
				rec.Status, rec.Reason = "skipped", u.skip
			} else if env := r.unit(ctx, p, st, u, &rec); env != nil {
				return *env
			}
			st.Records = append(st.Records, rec)
			st.Running, st.Waiting, st.Answer = "", "", nil
			done[u.Label] = true
			if err := r.save(ctx, st); err != nil {
				return r.failed(st, u.Label, "saving the checkpoint: %v", err)
			}
			if r.AfterStep != nil {
				r.AfterStep(u.Label)
			}
		}
	}
	art, err := writeArtifact(p, st)
	if err != nil {
		return r.failed(st, "", "%v", err)
	}
	if st.Session == "" {
		// Running the same command again starts a new run. A session's checkpoint stays until
		// the session ends (its runner drops it): a runner that died before it recorded the end
		// continues the run, which finds every step done, rather than run it all again.
		if _, _, _, err := r.Store.TakePause(ctx, st.Key); err != nil {
			return r.failed(st, "", "dropping the checkpoint: %v", err)
		}
	}
	return Envelope{OK: true, Status: StatusOK, Output: Output{Steps: st.Records, Outputs: st.Vars, Artifact: art}}
}

// unit runs u: its elicitation (parking the run until it is answered), then its invocation.
// A non-nil envelope ends the run there.
func (r *Runner) unit(ctx context.Context, p *steps.Playbook, st *state, u unit, rec *Record) *Envelope {
	if e := u.Elicit; e != nil {
		if st.Waiting != u.Label || st.Answer == nil {
			env := r.pause(ctx, st, u)
			return &env
		}
		// The answer stays in the state until the step is recorded: a run stopped during the
		// step's invocation continues with it, without asking again.
		rec.Answer = *st.Answer
		st.Vars[fmt.Sprintf("__elicit_step_%d", u.Number)] = *st.Answer
	}
	prompt := strings.TrimSpace(subst(u.prompt, st))
	if prompt == "" {
		// Nothing to ask the agent: an elicitation (its answer is the output) or a branch head.
		if u.Output != nil && rec.Answer != "" {
			rec.Var, rec.Value = u.Output.Var.Value, rec.Answer
			st.Vars[rec.Var] = rec.Value
		}
		return nil
	}
	st.Running = u.Label
	if err := r.save(ctx, st); err != nil {
		env := r.failed(st, u.Label, "saving the checkpoint: %v", err)
		return &env
	}
	ag := r.Agent
	if ag == nil {
		ag = &Command{Argv: st.Agent.Argv, Preset: st.Agent.Preset, Dir: st.Agent.Dir, Log: r.Log,
			Timeout: time.Duration(st.Agent.TimeoutMs) * time.Millisecond}
	}
	msg, err := ag.Invoke(ctx, u.Label, compose(p, st, u, prompt, rec.Answer))
	if err != nil {
		env := r.failed(st, u.Label, "step %s: the agent failed: %v", u.Label, err)
		return &env
	}
	rec.Output = strings.TrimSpace(msg)
	if o := u.Output; o != nil {
		v, err := capture(o, msg)
		if err != nil {
			// The step is not recorded as done: the checkpoint keeps it unfinished.
			env := r.failed(st, u.Label, "%s: step %s: @output(%s): %v", at(p.File, o.Var.Pos), u.Label, o.Var.Value, err)
			failed := *rec
			failed.Status, failed.Reason = "failed", err.Error()
			env.Output.Steps = append(append([]Record(nil), st.Records...), failed)
			return &env
		}
		rec.Var, rec.Value = o.Var.Value, v
		st.Vars[o.Var.Value] = v
	}
	return nil
}

// pause saves st waiting at u's elicitation under a new token's hash.
func (r *Runner) pause(ctx context.Context, st *state, u unit) Envelope {
	token, err := engine.NewToken()
	if err != nil {
		return r.failed(st, u.Label, "drawing a resume token: %v", err)
	}
	st.Waiting, st.Answer, st.Running = u.Label, nil, ""
	raw, err := json.Marshal(st)
	if err != nil {
		return r.failed(st, u.Label, "saving the pause: %v", err)
	}
	if err := r.Store.SavePause(ctx, playproto.HashToken(token), st.Session, raw); err != nil {
		return r.failed(st, u.Label, "saving the pause: %v", err)
	}
	// The pause holds the run now: the checkpoint goes, so that running the playbook again
	// starts a new run instead of asking again. A session's stays, waiting at the step: a runner
	// that died before it parked the session continues the run, which asks again (a new token)
	// rather than run the steps before it again.
	if st.Session != "" {
		err = r.save(ctx, st)
	} else {
		_, _, _, err = r.Store.TakePause(ctx, st.Key)
	}
	if err != nil {
		return r.failed(st, u.Label, "saving the checkpoint: %v", err)
	}
	req := &InputRequest{Step: u.Label, Kind: u.Elicit.Type, Prompt: subst(u.Elicit.Prompt, st), Options: options(u.Elicit), ResumeToken: token}
	recs := append(append([]Record(nil), st.Records...), Record{Step: u.Label, Title: u.Title.Value, Status: "pending", Reason: "waiting for a person"})
	return Envelope{OK: true, Status: StatusNeedsInput, Output: Output{Steps: recs, Outputs: st.Vars}, RequiresInput: req}
}

func (r *Runner) save(ctx context.Context, st *state) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return r.Store.PutState(ctx, st.Key, st.Session, raw)
}

func (r *Runner) failed(st *state, step, format string, args ...any) Envelope {
	env := fail("step", step, format, args...)
	env.Output = Output{Steps: st.Records, Outputs: st.Vars}
	return env
}

// check parses and validates the playbook, and refuses what this runtime does not run.
func check(file string, src []byte) (*steps.Playbook, *Envelope) {
	p, diags := steps.Check(file, src)
	if p != nil {
		diags = append(diags, unsupported(p)...).Sort()
	}
	if !diags.HasErrors() {
		return p, nil
	}
	env := fail("invalid", "", "the step playbook is not valid: %d problems", diags.Errors())
	for _, d := range diags {
		if d.Severity == ir.Error {
			env.Error.Diagnostics = append(env.Error.Diagnostics, d.String())
		}
	}
	return nil, &env
}

// unsupported refuses @tool and @prompt, which need connections and a prompt library this
// runtime does not have.
func unsupported(p *steps.Playbook) ir.Diagnostics {
	var d ir.Diagnostics
	var visit func(s *steps.Step)
	visit = func(s *steps.Step) {
		if s.Tool != nil {
			d = append(d, ir.Diagnostic{File: p.File, Pos: s.Tool.Pos, Severity: ir.Error,
				Message: fmt.Sprintf("step %s: @tool is not supported by this runtime", s.Label),
				Hint:    "ask the agent to do it in the step's prompt"})
		}
		if s.PromptRef != nil {
			d = append(d, ir.Diagnostic{File: p.File, Pos: s.PromptRef.Pos, Severity: ir.Error,
				Message: fmt.Sprintf("step %s: @prompt is not supported by this runtime (it has no prompt library)", s.Label),
				Hint:    "write the prompt into the step"})
		}
		for _, b := range s.Branches {
			for _, sub := range b.Steps {
				visit(sub)
			}
		}
	}
	for _, s := range p.Steps {
		visit(s)
	}
	return d
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}
