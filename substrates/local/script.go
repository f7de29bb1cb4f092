package local

import (
	"fmt"
	"os/exec"

	"github.com/autonomyhq/autonomy/internal/sessionenv"
)

// scriptArgv is the command that runs a script behavior on this machine: by its #! line, else the
// first interpreter its extension allows that is installed (ir.ScriptRun). A missing interpreter
// is an error that says how to install it.
func (in *Install) scriptArgv(cfg *ActorConfig) ([]string, error) {
	argv, err := cfg.Command.Script.Argv(in.Path(cfg.Behavior), exec.LookPath, sessionenv.NodeVersion)
	if err != nil {
		return nil, fmt.Errorf("actor %q cannot run its behavior %s: %v", cfg.Actor, cfg.Behavior, err)
	}
	return argv, nil
}
