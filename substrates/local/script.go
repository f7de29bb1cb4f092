package local

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

// scriptArgv is the command that runs a script behavior on this machine: by its #! line, else the
// first interpreter its extension allows that is installed (ir.ScriptRun). A missing interpreter
// is an error that says how to install it.
func (in *Install) scriptArgv(cfg *ActorConfig) ([]string, error) {
	argv, err := cfg.Command.Script.Argv(in.Path(cfg.Behavior), exec.LookPath, nodeVersion)
	if err != nil {
		return nil, fmt.Errorf("actor %q cannot run its behavior %s: %v", cfg.Actor, cfg.Behavior, err)
	}
	return argv, nil
}

// nodeVersion runs `node --version`, bounded: a node that hangs must not hang a launch.
func nodeVersion(node string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	return string(out), err
}
