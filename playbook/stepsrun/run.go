package stepsrun

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/playbook/engine"
	"github.com/autonomyhq/autonomy/playbook/internal/source"
	"github.com/autonomyhq/autonomy/playbook/steps"
)

// Runner runs and resumes step playbooks.
type Runner struct {
	// Agent runs the steps; nil runs each run's own AgentSpec as a Command logging to Log.
	Agent Agent
	Log   io.Writer
	Store Store
	// AfterStep, when set, is called after each step's checkpoint is saved (tests stop there).
	AfterStep func(label string)
	// Workspace and ArtifactsDir, when set, are where a resumed run's agent works and its
	// ## ARTIFACTS go, in place of those the run started with (a resume in another job's
	// checkout of the same repository).
	Workspace, ArtifactsDir string
	// Playbook, when set, is the playbook file a resumed run must have been started with (the
	// same bytes): the run goes on from it. AgentSpec, when set, replaces the agent command saved
	// with the pause (its argv, preset and timeout): a resuming job runs the agent it was compiled with.
	Playbook  string
	AgentSpec *AgentSpec
}

// Run starts the playbook of req, or continues its run that was stopped mid-way (same file,
// inputs and session), and runs it until it ends or waits for a person.
func (r *Runner) Run(ctx context.Context, req Request) Envelope {
	if err := engine.CheckLimits(req.Agent.TimeoutMs, 0); err != nil {
		return fail("invalid", "", "%v", err)
	}
	src, err := source.ReadFile(req.File, steps.MaxSize)
	if err != nil {
		return fail("invalid", "", "reading the playbook: %v", err)
	}
	p, env := check(req.File, src)
	if env != nil {
		return *env
	}
	inputs, err := bindInputs(p, req.ArgsJSON, req.IgnoreUnknownArgs)
	if err != nil {
		return fail("invalid", "", "%v", err)
	}
	st := &state{Kind: kind, File: req.File, Source: src, Inputs: inputs, ArtifactsDir: req.ArtifactsDir,
		Session: req.Session, Agent: req.Agent, Vars: map[string]string{}, Records: []Record{}}
	st.Key = runKey(st)
	if raw, ok, err := r.Store.GetState(ctx, st.Key); err != nil {
		return fail("internal", "", "%v", err)
	} else if ok {
		var saved state
		if err := json.Unmarshal(raw, &saved); err != nil {
			return fail("internal", "", "reading the checkpoint: %v", err)
		}
		st = &saved
	}
	return r.run(ctx, p, st)
}

// Resume redeems token with the person's answer and continues the run after the elicitation
// (Cancel cancels it instead). A token is accepted once; a wrong or used one is refused, and an
// answer that does not fit (not yes/no for a confirm, not an option for a select) is refused
// with the token left valid.
func (r *Runner) Resume(ctx context.Context, token string, a Answer) Envelope {
	hash := playproto.HashToken(token)
	raw, session, ok, err := r.Store.TakePause(ctx, hash)
	if err != nil {
		return fail("internal", "", "%v", err)
	}
	if !ok {
		return fail("token", "", "the resume token is not recognized: it is wrong, or was already used (a token resumes a run once)")
	}
	if err := r.mismatch(raw); err != nil {
		if serr := r.Store.SavePause(ctx, hash, session, raw); serr != nil {
			return fail("internal", "", "%v (and the pause could not be kept: %v)", err, serr)
		}
		return fail("invalid", "", "%v; the token is still valid", err)
	}
	if a.Cancel {
		return Cancelled(raw)
	}
	next, err := Apply(raw, a)
	if err != nil {
		if serr := r.Store.SavePause(ctx, hash, session, raw); serr != nil {
			return fail("internal", "", "%v (and the pause could not be kept: %v)", err, serr)
		}
		return fail("invalid", "", "%v; the token is still valid", err)
	}
	return r.Resumed(ctx, next)
}

// Continue runs the answered run a runner saved under playproto.ContinueKey(session).
func (r *Runner) Continue(ctx context.Context, session string) Envelope {
	raw, _, ok, err := r.Store.TakePause(ctx, playproto.ContinueKey(session))
	if err != nil {
		return fail("internal", "", "%v", err)
	}
	if !ok {
		return fail("token", "", "session %s has no answered run waiting to continue", session)
	}
	return r.Resumed(ctx, raw)
}

// Resumed continues the answered state raw (Apply's result).
func (r *Runner) Resumed(ctx context.Context, raw []byte) Envelope {
	var st state
	if err := json.Unmarshal(raw, &st); err != nil || st.Kind != kind {
		return fail("internal", "", "the paused run is not a step playbook's")
	}
	p, env := check(st.File, st.Source)
	if env != nil {
		return *env
	}
	if err := r.mismatch(raw); err != nil {
		return fail("invalid", "", "%v", err)
	}
	if r.Playbook != "" {
		st.File = r.Playbook
	}
	if r.AgentSpec != nil {
		st.Agent.Argv, st.Agent.Preset, st.Agent.TimeoutMs = r.AgentSpec.Argv, r.AgentSpec.Preset, r.AgentSpec.TimeoutMs
	}
	if r.Workspace != "" {
		st.Agent.Dir = r.Workspace
	}
	if r.ArtifactsDir != "" {
		st.ArtifactsDir = r.ArtifactsDir
	}
	return r.run(ctx, p, &st)
}

// mismatch refuses the paused state raw when r.Playbook is set and is not the playbook, byte for
// byte, the run was started with.
func (r *Runner) mismatch(raw []byte) error {
	if r.Playbook == "" {
		return nil
	}
	var st state
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("reading the paused run: %v", err)
	}
	src, err := source.ReadFile(r.Playbook, steps.MaxSize)
	if err != nil {
		return fmt.Errorf("reading the playbook: %v", err)
	}
	if !bytes.Equal(src, st.Source) {
		return fmt.Errorf("the paused run was not started with the playbook %s as it is now (it changed since, or the run is another's): it is not resumed", r.Playbook)
	}
	return nil
}

// Apply records the answer a in the paused state raw and returns the state to continue.
func Apply(raw []byte, a Answer) ([]byte, error) {
	var st state
	if err := json.Unmarshal(raw, &st); err != nil || st.Kind != kind || st.Waiting == "" {
		return nil, fmt.Errorf("the paused run is not a step playbook waiting for an answer")
	}
	p, _ := steps.Parse(st.File, st.Source)
	u := find(p, st.Waiting)
	if u == nil || u.Elicit == nil {
		return nil, fmt.Errorf("the paused step %s asks nothing", st.Waiting)
	}
	ans, err := answer(u.Elicit, a)
	if err != nil {
		return nil, fmt.Errorf("step %s: %v", st.Waiting, err)
	}
	st.Answer = &ans
	return json.Marshal(&st)
}

// Waiting is the elicitation the paused state raw waits at (its token left empty), or nil.
func Waiting(raw []byte) *InputRequest {
	var st state
	if json.Unmarshal(raw, &st) != nil || st.Waiting == "" {
		return nil
	}
	p, _ := steps.Parse(st.File, st.Source)
	if u := find(p, st.Waiting); u != nil && u.Elicit != nil {
		return &InputRequest{Step: st.Waiting, Kind: u.Elicit.Type, Prompt: subst(u.Elicit.Prompt, &st), Options: options(u.Elicit)}
	}
	return nil
}

// NextStep is the label of the step the checkpoint raw continues at: the step that was running
// (its invocation's output was never recorded, so it runs again), the one waiting for a person,
// else the first step not recorded; "" when every step is recorded, or raw is no step playbook's.
func NextStep(raw []byte) string {
	var st state
	if json.Unmarshal(raw, &st) != nil || st.Kind != kind {
		return ""
	}
	switch {
	case st.Running != "":
		return st.Running
	case st.Waiting != "":
		return st.Waiting
	}
	p, _ := steps.Parse(st.File, st.Source)
	if p == nil {
		return ""
	}
	done := map[string]bool{}
	for _, rec := range st.Records {
		done[rec.Step] = true
	}
	vars := func(name string) string { return lookup(&st, name) }
	for _, s := range p.Steps {
		for _, u := range plan(s, vars) {
			if !done[u.Label] {
				return u.Label
			}
		}
	}
	return ""
}

// Cancelled is the envelope of the paused state raw cancelled by the person.
func Cancelled(raw []byte) Envelope {
	var st state
	if err := json.Unmarshal(raw, &st); err != nil {
		return fail("internal", "", "reading the paused run: %v", err)
	}
	recs := append(st.Records, Record{Step: st.Waiting, Status: "cancelled", Reason: "cancelled instead of answered"})
	return Envelope{OK: true, Status: StatusCancelled, Output: Output{Steps: recs, Outputs: st.Vars}}
}

// answer checks a against the elicitation.
func answer(e *steps.Elicit, a Answer) (string, error) {
	text := strings.TrimSpace(a.Text)
	switch e.Type {
	case steps.ElicitConfirm:
		switch {
		case a.Approve:
			return "yes", nil
		case a.Deny:
			return "no", nil
		}
		if yes, ok := steps.YesNo(text); ok {
			return map[bool]string{true: "yes", false: "no"}[yes], nil
		}
		return "", fmt.Errorf("a confirm is answered with --approve or --deny (or --answer yes|no), not %q", text)
	case steps.ElicitSelect:
		if a.Approve || a.Deny {
			return "", fmt.Errorf("a select is answered with --answer OPTION (one of: %s), not --approve or --deny", strings.Join(e.Options, ", "))
		}
		for _, o := range e.Options {
			if strings.EqualFold(o, text) {
				return o, nil
			}
		}
		return "", fmt.Errorf("the answer %q is not one of the options: %s", text, strings.Join(e.Options, ", "))
	}
	if a.Approve || a.Deny {
		return "", fmt.Errorf("an input is answered with --answer TEXT, not --approve or --deny")
	}
	return text, nil
}

func options(e *steps.Elicit) []string {
	switch {
	case e.Type == steps.ElicitConfirm:
		return []string{"yes", "no"}
	case e.Options == nil:
		return []string{}
	}
	return e.Options
}

// runKey keys a run's checkpoint: its session, else what it runs (file, source, inputs).
func runKey(st *state) string {
	if st.Session != "" {
		return playproto.SessionKey(st.Session)
	}
	h := sha256.New()
	abs, _ := filepath.Abs(st.File)
	names := make([]string, 0, len(st.Inputs))
	for k := range st.Inputs {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", abs, st.Source, st.ArtifactsDir)
	for _, k := range names {
		fmt.Fprintf(h, "%s=%s\x00", k, st.Inputs[k])
	}
	return "steps:" + hex.EncodeToString(h.Sum(nil))
}

func fail(kind, step, format string, args ...any) Envelope {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return Envelope{OK: false, Output: Output{Steps: []Record{}, Outputs: map[string]string{}}, Error: &playproto.Error{Kind: kind, Step: step, Message: msg}}
}
