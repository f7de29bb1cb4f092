package stepsrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/playbook/engine"
)

// Command is an Agent that execs a CLI per step, the prompt on its stdin, in its own process
// group (killed with the run). With a Preset, Argv may hold the preset's placeholders (its result
// file, git directories, model proxy), and the final message is read as the preset gives it;
// without one, the final message is the command's stdout.
type Command struct {
	Argv []string
	// Preset is the agent preset Argv was made from ("" for a command of one's own).
	Preset string
	// Dir is the workspace the agent works in; Env its environment (nil: the process's).
	Dir string
	Env []string
	// Log receives the agent's stderr (and a preset's stdout).
	Log io.Writer
	// Timeout bounds one invocation (0: none).
	Timeout time.Duration
	// Drain is how long its output is still read once it has exited, while something it left
	// running holds the output open; then its process group is killed and the invocation keeps
	// its exit status (default engine.DefaultOutputDrain).
	Drain time.Duration
}

// Invoke runs step's prompt and returns the final message.
func (c *Command) Invoke(ctx context.Context, step, prompt string) (string, error) {
	if len(c.Argv) == 0 {
		return "", fmt.Errorf("no agent command")
	}
	tmp, err := os.MkdirTemp("", "autonomy-step-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	result := filepath.Join(tmp, "result")
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(env[:len(env):len(env)], "AUTONOMY_STEP="+step, "AUTONOMY_RESULT="+result)
	argv := c.Argv
	var p agent.Preset
	if c.Preset != "" {
		var ok bool
		if p, ok = agent.Lookup(c.Preset); !ok {
			return "", fmt.Errorf("unknown agent preset %q (the presets: %s)", c.Preset, strings.Join(agent.Names(), ", "))
		}
		values := map[string]string{agent.Result: result, agent.Proxy: envValue(env, p.BaseURLEnv),
			agent.GitDir: gitDir(ctx, c.Dir, "--git-common-dir"), agent.WorktreeGitDir: gitDir(ctx, c.Dir, "--git-dir")}
		if argv, err = p.Fill(argv, values); err != nil {
			return "", err
		}
		var removeTmp func()
		if env, removeTmp, err = p.TempEnv(env); err != nil {
			return "", err
		}
		defer removeTmp() // on return, its process group killed
	}
	log := c.Log
	if log == nil {
		log = io.Discard
	}
	var stdout bytes.Buffer
	cmd := osexec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.SysProcAttr = c.Dir, env, proc.SysProcAttr()
	cmd.Stdin = strings.NewReader(prompt)
	cmd.Stdout, cmd.Stderr = &stdout, log
	// The invocation ends when the agent exits: a child it left in the background holding its
	// output is not waited for longer than the drain (then the group is killed, below).
	cmd.WaitDelay = c.Drain
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = engine.DefaultOutputDrain
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("starting %s: %v", argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timeout <-chan time.Time
	if c.Timeout > 0 {
		timer := time.NewTimer(c.Timeout)
		defer timer.Stop()
		timeout = timer.C
	}
	select {
	case err = <-done:
	case <-timeout:
		_ = proc.Kill(cmd.Process.Pid)
		<-done
		return "", fmt.Errorf("timed out after %v; its process group was killed", c.Timeout)
	case <-ctx.Done():
		_ = proc.Kill(cmd.Process.Pid)
		<-done
		return "", fmt.Errorf("stopped: %v; its process group was killed", ctx.Err())
	}
	_ = proc.Kill(cmd.Process.Pid) // what it left running in its group goes with it
	if errors.Is(err, osexec.ErrWaitDelay) {
		err = nil // it exited 0; what it left running held the output open past the drain
	}
	if err != nil {
		return "", fmt.Errorf("%s: %v", argv[0], err)
	}
	switch {
	case c.Preset != "" && p.Output == agent.OutputClaudeJSON:
		msg, _, err := agent.Extract(stdout.Bytes())
		return msg, err
	case c.Preset != "":
		log.Write(stdout.Bytes())
		b, err := os.ReadFile(result)
		if err != nil {
			return "", fmt.Errorf("the agent wrote no final message: %v", err)
		}
		return string(b), nil
	}
	return stdout.String(), nil
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// gitDir is a git directory of dir (see the local runner's), or dir itself outside a repository.
func gitDir(ctx context.Context, dir, flag string) string {
	if dir == "" {
		dir = "."
	}
	abs, _ := filepath.Abs(dir)
	out, err := osexec.CommandContext(ctx, "git", "-C", abs, "rev-parse", "--path-format=absolute", flag).Output()
	if d := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(d) {
		return d
	}
	return abs
}
