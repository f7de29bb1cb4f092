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
	"github.com/autonomyhq/autonomy/playbook/resume"
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
		rec := &resume.Recorder{Store: st}
		r := &stepsrun.Runner{Store: rec, Log: cmd.ErrOrStderr()}
		env := r.Run(ctx, stepsrun.Request{File: file, ArgsJSON: req.ArgsJSON, ArtifactsDir: sf.artifactsDir,
			Session: req.Session, Agent: spec, IgnoreUnknownArgs: req.IgnoreUnknownArgs})
		return rec.Export(sf.pauseFile, env)
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
