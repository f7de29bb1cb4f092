package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/playbook/workflow"
)

// nodeArgv is the argv a node step runs: Node on the script (its first word, a path relative
// to the step's directory dir that stays inside the workspace, symlinks resolved) with the
// other words as arguments. The program it runs is node, which policy.box.cli must allow.
func (x *exec) nodeArgv(dir string, words []string) ([]string, error) {
	if len(words) == 0 {
		return nil, fmt.Errorf("the node command names no script")
	}
	script := words[0]
	if !workflow.HasSuffix(script, workflow.NodeScriptExts) {
		return nil, fmt.Errorf("node runs a script file (%s), not %q", strings.Join(workflow.NodeScriptExts, ", "), script)
	}
	rel, err := filepath.Rel(x.st.Workspace, dir)
	if err != nil {
		return nil, err
	}
	full, err := confine(x.st.Workspace, rel, script)
	if err != nil {
		return nil, fmt.Errorf("the script: %v", err)
	}
	if fi, err := os.Stat(full); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("the script %s is not a file in the workspace", script)
	}
	if why, fix := x.st.CLI.Refuses("node"); why != "" {
		return nil, fmt.Errorf("%s (%s)", why, fix)
	}
	env := x.e.Env
	if env == nil {
		env = os.Environ()
	}
	if _, err := lookPath(env, "node"); err != nil {
		return nil, fmt.Errorf("node is not on PATH: install Node.js to run node steps")
	}
	return append([]string{"node", full}, words[1:]...), nil
}
