package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/playbook/engine"
	"github.com/autonomyhq/autonomy/playbook/stepsrun"
)

// stepsFlags are the flags of playbook run that only a step playbook reads.
type stepsFlags struct {
	agent, agentVersion, model, artifactsDir, agentArgv, sandbox, pauseFile string
}

func (sf *stepsFlags) add(f *pflag.FlagSet) {
	f.StringVar(&sf.agent, "agent", "", "step playbooks: the agent preset every step runs ("+agent.Default+" by default; one of "+fmt.Sprint(agent.Names())+")")
	f.StringVar(&sf.agentVersion, "agent-version", "", "step playbooks: the preset's version that is installed (a warning when it is not the tested one)")
	f.StringVar(&sf.model, "model", "", "step playbooks: the model the preset runs (its default when empty)")
	f.StringVar(&sf.artifactsDir, "artifacts-dir", "", "step playbooks: where ## ARTIFACTS is written (artifact.EXT)")
	f.StringVar(&sf.sandbox, "sandbox", "workspace", "step playbooks: workspace (the preset's sandbox: only the workspace is writable) or none (the machine is the sandbox, e.g. a CI VM)")
	f.StringVar(&sf.agentArgv, "agent-argv", "", "step playbooks: the agent command as a JSON list of words (set by the runner)")
	_ = f.MarkHidden("agent-argv")
	f.StringVar(&sf.pauseFile, "pause-file", "", "step playbooks: when the run waits for a person, also write its pause (token hash, state) to this JSON file (set by gh-actions workflows)")
	_ = f.MarkHidden("pause-file")
}

// checkPauseFile refuses a --pause-file that exists and is not a regular file (a FIFO would block
// the write, a device swallow it), before the run starts.
func (sf *stepsFlags) checkPauseFile() error {
	if sf.pauseFile == "" {
		return nil
	}
	if err := playbook.CheckRegular(sf.pauseFile); err != nil {
		return usageError("--pause-file %s: %s: give a path to a JSON file", sf.pauseFile, playbook.Reason(err))
	}
	return nil
}

// spec is the agent command of a step playbook run in workspace.
func (sf *stepsFlags) spec(cmd *cobra.Command, workspace string) (stepsrun.AgentSpec, error) {
	dir, err := filepath.Abs(workspace)
	if err != nil {
		return stepsrun.AgentSpec{}, usageError("--workspace: %v", err)
	}
	spec := stepsrun.AgentSpec{Dir: dir, Preset: sf.agent}
	if sf.agentArgv != "" {
		if err := json.Unmarshal([]byte(sf.agentArgv), &spec.Argv); err != nil || len(spec.Argv) == 0 {
			return spec, usageError("--agent-argv must be a JSON list of words")
		}
		return spec, nil
	}
	if spec.Preset == "" {
		spec.Preset = agent.Default
	}
	p, ok := agent.Lookup(spec.Preset)
	if !ok {
		return spec, usageError("--agent %q: the presets are %v", spec.Preset, agent.Names())
	}
	if sf.agentVersion != "" && sf.agentVersion != p.Version {
		fmt.Fprintf(cmd.ErrOrStderr(), "autonomy: warning: %s %s is not the tested version %s\n", p.Package, sf.agentVersion, p.Version)
	}
	var sb agent.Sandbox
	switch sf.sandbox {
	case "workspace", "":
		sb.Network = true
	case "none":
		sb.None = true
	default:
		return spec, usageError("--sandbox is workspace or none, not %q", sf.sandbox)
	}
	spec.Argv = p.Argv(agent.Options{Model: sf.model, Sandbox: sb})
	if _, err := exec.LookPath(p.Bin); err != nil {
		return spec, usageError("the agent preset %s needs %s, which is not on PATH: install it with %s", spec.Preset, p.Bin, p.InstallHint())
	}
	return spec, nil
}

// runSteps runs the step playbook file and prints its envelope.
func runSteps(cmd *cobra.Command, statePath, file string, req engine.Request, sf *stepsFlags) error {
	if err := sf.checkPauseFile(); err != nil {
		return err
	}
	spec, err := sf.spec(cmd, req.Workspace)
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("timeout-ms") {
		spec.TimeoutMs = req.TimeoutMs // each step's invocation; the workflow default is too short for an agent
	}
	return withStore(cmd, statePath, func(ctx context.Context, st *store.Store) any {
		rec := &pauseRecorder{Store: st}
		r := &stepsrun.Runner{Store: rec, Log: cmd.ErrOrStderr()}
		env := r.Run(ctx, stepsrun.Request{File: file, ArgsJSON: req.ArgsJSON, ArtifactsDir: sf.artifactsDir,
			Session: req.Session, Agent: spec, IgnoreUnknownArgs: req.IgnoreUnknownArgs})
		return rec.export(sf.pauseFile, env)
	})
}

// pauseRecorder is the store of a run that remembers the last pause it saved.
type pauseRecorder struct {
	stepsrun.Store
	last *stepsrun.Pause
}

// export writes the pause the run ended waiting at to path (none: nothing), and returns env, or
// a failure when the file cannot be written.
func (p *pauseRecorder) export(path string, env stepsrun.Envelope) stepsrun.Envelope {
	if path == "" || env.Status != stepsrun.StatusNeedsInput || p.last == nil {
		return env
	}
	if err := writePause(path, *p.last); err != nil {
		return stepsrun.Envelope{Output: env.Output, Error: &engine.Error{Kind: "internal", Message: fmt.Sprintf("writing --pause-file: %v", err)}}
	}
	return env
}

func (p *pauseRecorder) SavePause(ctx context.Context, hash, session string, state []byte) error {
	if err := p.Store.SavePause(ctx, hash, session, state); err != nil {
		return err
	}
	p.last = &stepsrun.Pause{TokenHash: hash, Session: session, State: append(json.RawMessage(nil), state...)}
	return nil
}

func writePause(path string, p stepsrun.Pause) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return playbook.WriteRegular(path, append(b, '\n'), false)
}

// resumeOverrides are what a step playbook's resume may set anew: where its agent works and its
// artifacts go, the agent command, and the playbook file the paused run must match; and where to
// write its next pause (--pause-file), should it ask again.
type resumeOverrides struct {
	workspace, artifactsDir, playbook, pauseFile string
	agent                                        *stepsrun.AgentSpec
}

// resumeAny redeems a pause (by token, or a runner session's continuation) of either runtime:
// a step playbook's state goes to stepsrun, a workflow's to the engine.
func resumeAny(cmd *cobra.Command, statePath, token, cont string, o resumeOverrides, a stepsrun.Answer) error {
	return withStore(cmd, statePath, func(ctx context.Context, st *store.Store) any {
		key := engine.HashToken(token)
		if cont != "" {
			key = engine.ContinueKey(cont)
		}
		raw, session, ok, err := st.TakePause(ctx, key)
		if err != nil {
			return engine.Envelope{Output: []engine.StepResult{}, Error: &engine.Error{Kind: "internal", Message: err.Error()}}
		}
		held := &heldPause{Store: st, key: key, raw: raw, session: session, ok: ok}
		stepsAnswer := a.Text != "" || a.Cancel
		if ok && stepsrun.IsState(raw) || !ok && stepsAnswer {
			rec := &pauseRecorder{Store: held}
			r := &stepsrun.Runner{Store: rec, Log: cmd.ErrOrStderr(), Workspace: o.workspace, ArtifactsDir: o.artifactsDir, Playbook: o.playbook, AgentSpec: o.agent}
			var env stepsrun.Envelope
			if cont != "" {
				env = r.Continue(ctx, cont)
			} else {
				env = r.Resume(ctx, token, a)
			}
			return rec.export(o.pauseFile, env)
		}
		if stepsAnswer {
			_ = st.SavePause(ctx, key, session, raw) // not ours to spend
			return engine.Envelope{Output: []engine.StepResult{}, Error: &engine.Error{Kind: "token",
				Message: "--answer and --cancel resume a step playbook's elicitation; this token is not one (a workflow's approval takes --approve or --deny)"}}
		}
		e := &engine.Engine{Pauses: held}
		if cont != "" {
			return e.Continue(ctx, cont)
		}
		return e.Resume(ctx, token, a.Approve)
	})
}

// stateDB is the database --state names: the path given, or playbooks.db in it when it is a
// directory. A FIFO, a device or a socket is refused up front (SQLite would fail on it with
// "disk I/O error", or block).
func stateDB(path string) (string, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "playbooks.db")
	}
	if err := playbook.CheckRegular(path); err != nil {
		return "", usageError("--state %s: %s: give the SQLite database of paused runs, or a directory for it", path, playbook.Reason(err))
	}
	return path, nil
}

// heldPause is the store with one pause already taken out: taking it again returns it once.
type heldPause struct {
	*store.Store
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

// withStore opens the database of paused runs, calls do (cancelled by SIGTERM or an interrupt)
// and prints the envelope it returns: exit 0 when its ok is true, 1 when false.
func withStore(cmd *cobra.Command, statePath string, do func(context.Context, *store.Store) any) error {
	db, err := stateDB(statePath)
	if err != nil {
		return err
	}
	st, err := store.Open(db)
	if err != nil {
		return usageError("%v", err)
	}
	defer st.Close()
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	env := do(ctx, st)
	b, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return usageError("%v", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
	var ok struct {
		OK bool `json:"ok"`
	}
	if json.Unmarshal(b, &ok); !ok.OK {
		return &exitError{Code: exitProblems}
	}
	return nil
}
