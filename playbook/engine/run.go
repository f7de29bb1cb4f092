package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/workflow"
)

// run executes st's workflow from st.Next; approved says the step at st.Next was approved.
func (e *Engine) run(ctx context.Context, st *state, approved bool) Envelope {
	w, diags := workflow.Parse(st.File, st.Source)
	if w == nil || diags.HasErrors() {
		return fail("internal", "", "the workflow no longer parses")
	}
	x := &exec{e: e, st: st, w: w, secrets: map[string]string{}}
	for _, name := range secretNames(st) {
		if v, ok := e.secret(name); ok && v != "" {
			x.secrets[name] = v
		}
	}
	for i := st.Next; i < len(w.Steps); i++ {
		s := w.Steps[i]
		id := s.ID.Value
		if err := ctx.Err(); err != nil {
			return x.failed(id, "the run was stopped: %v", err)
		}
		if c := s.Condition.Value; c != "" && !(approved && i == st.Next) {
			ok, err := x.condition(c)
			if err != nil {
				return x.failed(id, "step %q: condition %q: %v", id, c, err)
			}
			if !ok {
				st.Results = append(st.Results, record{ID: id, Status: "skipped", Reason: "condition " + c + " is false"})
				continue
			}
		}
		rec := record{ID: id}
		if s.IsApproval() {
			if !(approved && i == st.Next) {
				return x.pause(ctx, i)
			}
			rec.Approved = true
		}
		err := x.step(ctx, s, &rec)
		if err == nil {
			err = x.verify(ctx, s.Schema, s.PostconditionStep(), &rec) // verify.go
		}
		if err != nil {
			rec.Status = "failed"
			st.Results = append(st.Results, rec)
			return x.failed(id, "step %q: %v", id, err)
		}
		rec.Status = "ok"
		st.Results = append(st.Results, rec)
	}
	return Envelope{OK: true, Status: StatusOK, Output: e.view(st, st.Results)}
}

// exec is one run in progress.
type exec struct {
	e       *Engine
	st      *state
	w       *workflow.Workflow
	secrets map[string]string // handle → value, for substitution and redaction
}

func (e *Engine) secret(name string) (string, bool) {
	if e.Secret != nil {
		return e.Secret(name)
	}
	return lookupEnv(e.Env, name)
}

func (x *exec) failed(step, format string, args ...any) Envelope {
	env := fail("step", step, "%s", x.redact(fmt.Sprintf(format, args...)))
	env.Output = x.e.viewWith(x.st, x.st.Results, x.redact)
	return env
}

// pause saves the run waiting at step i and returns the approval request.
func (x *exec) pause(ctx context.Context, i int) Envelope {
	s := x.w.Steps[i]
	if x.e.Pauses == nil {
		return x.failed(s.ID.Value, "step %q needs approval, and this run has no store to pause in", s.ID.Value)
	}
	token, err := newToken()
	if err != nil {
		return x.failed(s.ID.Value, "drawing a resume token: %v", err)
	}
	x.st.Next = i
	raw, err := json.Marshal(x.st)
	if err != nil {
		return x.failed(s.ID.Value, "saving the pause: %v", err)
	}
	if err := x.e.Pauses.SavePause(ctx, playproto.HashToken(token), x.st.Session, raw); err != nil {
		return x.failed(s.ID.Value, "saving the pause: %v", err)
	}
	prompt := s.Prompt.Value
	if prompt == "" {
		prompt = fmt.Sprintf("Approve step %q (%s)?", s.ID.Value, s.Command.Value)
	}
	a := &Approval{Step: s.ID.Value, Prompt: x.redact(prompt), Items: []json.RawMessage{}, ResumeToken: token}
	prior := ""
	if s.Stdin.Value != "" {
		prior, _ = x.subst(s.Stdin.Value, false)
	} else if n := len(x.st.Results); n > 0 {
		prior = x.st.Results[n-1].Stdout
	}
	prior = x.redact(prior)
	a.Preview, a.PreviewTruncated = clip(prior, PreviewBytes)
	var items []json.RawMessage
	if json.Unmarshal([]byte(prior), &items) == nil && len(prior) <= PreviewBytes {
		if len(items) > maxItems {
			items = items[:maxItems]
		}
		a.Items = items
	}
	out := x.e.viewWith(x.st, append(append([]record(nil), x.st.Results...), record{ID: s.ID.Value, Status: "pending", Reason: "waiting for approval"}), x.redact)
	return Envelope{OK: true, Status: StatusNeedsApproval, Output: out, RequiresApproval: a}
}

// view shows records with the secrets the environment resolves redacted.
func (e *Engine) view(st *state, recs []record) []StepResult {
	x := &exec{e: e, st: st, secrets: map[string]string{}}
	for _, name := range secretNames(st) {
		if v, ok := e.secret(name); ok && v != "" {
			x.secrets[name] = v
		}
	}
	return e.viewWith(st, recs, x.redact)
}

func (e *Engine) viewWith(_ *state, recs []record, redact func(string) string) []StepResult {
	out := make([]StepResult, 0, len(recs))
	for _, r := range recs {
		v := StepResult{ID: r.ID, Status: r.Status, Stdout: redact(r.Stdout), ExitCode: r.ExitCode, Approved: r.Approved, Truncated: r.Trunc, Reason: redact(r.Reason)}
		if len(r.JSON) > 0 {
			red := redact(string(r.JSON))
			if json.Valid([]byte(red)) {
				v.JSON = json.RawMessage(red)
			}
		}
		out = append(out, v)
	}
	return out
}

// redact replaces every resolved secret value with its handle.
func (x *exec) redact(s string) string {
	for name, v := range x.secrets {
		if v != "" && strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, "[secret:"+name+"]")
		}
	}
	return s
}

func clip(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut], true
}

// allowed refuses a $secrets.NAME handle that policy does not allow.
func allowed(w *workflow.Workflow, allow []string) ir.Diagnostics {
	if w == nil {
		return nil
	}
	ok := map[string]bool{}
	for _, a := range allow {
		ok[a] = true
	}
	var d ir.Diagnostics
	for _, s := range w.Steps {
		vals := []ir.String{s.Command, s.Stdin, s.Cwd, s.Prompt, s.Condition}
		for _, ev := range s.Env {
			vals = append(vals, ev.Value)
		}
		for _, v := range vals {
			for _, m := range workflow.RefPattern().FindAllStringSubmatch(v.Value, -1) {
				if m[1] == workflow.SecretsRef && !ok[m[2]] {
					d = append(d, ir.Diagnostic{File: w.File, Pos: v.Pos, Severity: ir.Error,
						Message: fmt.Sprintf("step %q: the secret handle $secrets.%s is not in the allowlist", s.ID.Value, m[2]),
						Hint:    "allow it in policy (or with --secret " + m[2] + " on the command line)"})
				}
			}
		}
	}
	return d
}

func lookupEnv(env []string, name string) (string, bool) {
	if env == nil {
		return lookupOS(name)
	}
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// jsonOutput parses a step's output declared json: exactly one JSON value.
func jsonOutput(out []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(out))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("declares output: json, and its output is not JSON (%v)", err)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("declares output: json, and its output holds more than one JSON value (ambiguous)")
	} else if err.Error() != "EOF" {
		return nil, fmt.Errorf("declares output: json, and its output has text after the JSON value")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
