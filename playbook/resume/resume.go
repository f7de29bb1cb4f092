// Package resume redeems a paused playbook run of either runtime, whoever asks (autonomy
// playbook resume, the local runner's continuation, a gh-actions job): it takes the pause out of
// the store once, gives a step playbook's state to stepsrun and a workflow's to the engine, and
// puts back a pause the answer does not fit. Recorder remembers the pause a run ends waiting at,
// for a trusted job to read as a file (--pause-file).
package resume

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/playbook/engine"
	"github.com/autonomyhq/autonomy/playbook/stepsrun"
)

// Request is a pause to redeem and how.
type Request struct {
	// Token is the resume token of the pause; Continue, when set instead, is the runner session
	// whose answered run continues (playproto.ContinueKey).
	Token, Continue string
	// Answer is the person's answer: a step playbook's text or cancel, a workflow's approve or
	// deny.
	Answer stepsrun.Answer
	// Log receives a step playbook's progress.
	Log io.Writer
	// What a step playbook's resume may set anew: where its agent works and its artifacts go,
	// the playbook file the paused run must match, the agent command; and where to write its
	// next pause, should it ask again (PauseFile; none: nowhere).
	Workspace, ArtifactsDir, Playbook, PauseFile string
	Agent                                        *stepsrun.AgentSpec
}

// Resume redeems the pause req names in st and returns the envelope of the run it continued (a
// stepsrun.Envelope or an engine.Envelope). A step playbook's answer (text or cancel) to a pause
// that is a workflow's is refused, and the pause put back.
func Resume(ctx context.Context, st stepsrun.Store, req Request) any {
	key := playproto.HashToken(req.Token)
	if req.Continue != "" {
		key = playproto.ContinueKey(req.Continue)
	}
	raw, session, ok, err := st.TakePause(ctx, key)
	if err != nil {
		return engine.Envelope{Output: []engine.StepResult{}, Error: &engine.Error{Kind: "internal", Message: err.Error()}}
	}
	held := &heldPause{Store: st, key: key, raw: raw, session: session, ok: ok}
	stepsAnswer := req.Answer.Text != "" || req.Answer.Cancel
	if ok && playproto.IsStepsState(raw) || !ok && stepsAnswer {
		rec := &Recorder{Store: held}
		r := &stepsrun.Runner{Store: rec, Log: req.Log, Workspace: req.Workspace, ArtifactsDir: req.ArtifactsDir, Playbook: req.Playbook, AgentSpec: req.Agent}
		var env stepsrun.Envelope
		if req.Continue != "" {
			env = r.Continue(ctx, req.Continue)
		} else {
			env = r.Resume(ctx, req.Token, req.Answer)
		}
		return rec.Export(req.PauseFile, env)
	}
	if stepsAnswer {
		_ = st.SavePause(ctx, key, session, raw) // not ours to spend
		return engine.Envelope{Output: []engine.StepResult{}, Error: &engine.Error{Kind: "token",
			Message: "--answer and --cancel resume a step playbook's elicitation; this token is not one (a workflow's approval takes --approve or --deny)"}}
	}
	e := &engine.Engine{Pauses: held}
	if req.Continue != "" {
		return e.Continue(ctx, req.Continue)
	}
	return e.Resume(ctx, req.Token, req.Answer.Approve)
}

// heldPause is the store with one pause already taken out: taking it again returns it once.
type heldPause struct {
	stepsrun.Store
	key, session string
	raw          []byte
	ok           bool
}

func (h *heldPause) TakePause(ctx context.Context, key string) ([]byte, string, bool, error) {
	if key != h.key {
		return h.Store.TakePause(ctx, key)
	}
	raw, session, ok := h.raw, h.session, h.ok
	h.raw, h.ok = nil, false
	return raw, session, ok, nil
}

// Recorder is the store of a run that remembers the last pause it saved.
type Recorder struct {
	stepsrun.Store
	last *stepsrun.Pause
}

// SavePause saves the pause in the store and remembers it.
func (p *Recorder) SavePause(ctx context.Context, hash, session string, state []byte) error {
	if err := p.Store.SavePause(ctx, hash, session, state); err != nil {
		return err
	}
	p.last = &stepsrun.Pause{TokenHash: hash, Session: session, State: append(json.RawMessage(nil), state...)}
	return nil
}

// Export writes the pause the run ended waiting at to path as JSON (path empty, or the run not
// waiting for input: nothing), and returns env, or a failure when the file cannot be written.
func (p *Recorder) Export(path string, env stepsrun.Envelope) stepsrun.Envelope {
	if path == "" || env.Status != stepsrun.StatusNeedsInput || p.last == nil {
		return env
	}
	b, err := json.Marshal(*p.last)
	if err == nil {
		err = playbook.WriteRegular(path, append(b, '\n'), false)
	}
	if err != nil {
		return stepsrun.Envelope{Output: env.Output, Error: &engine.Error{Kind: "internal", Message: fmt.Sprintf("writing --pause-file: %v", err)}}
	}
	return env
}
