package ghactions

import (
	"strings"

	"github.com/autonomyhq/autonomy/ir"
)

// setupBun is oven-sh/setup-bun, pinned to a full commit SHA; the comment names its version. A
// job runs a TypeScript script with Bun, which GitHub's runners do not ship.
var setupBun = action{"oven-sh/setup-bun", "0c5077e51419868618aeaa5fe8019c62421857d6", "v2.2.0"}

// scriptKey names how an actor's behavior runs, so actors that run the same way share one run
// step: "skill", or the script's command.
func scriptKey(a *ir.Actor) string {
	if a.Skill || a.Script == nil {
		return "skill"
	}
	return "script:" + strings.Join(scriptCommand(a.Script), "\x00")
}

// scriptCommand is the interpreter command a script runs with on a GitHub runner (its path is
// appended): its #! line, else by extension — sh, node, and Bun for TypeScript (installed by
// the job: see needsBun).
func scriptCommand(s *ir.ScriptRun) []string {
	if s == nil {
		return []string{"sh"}
	}
	if len(s.Shebang) > 0 {
		return s.Shebang
	}
	switch s.Ext {
	case ".ts":
		return []string{"bun"}
	case ".js", ".mjs":
		return []string{"node"}
	}
	return []string{"sh"}
}

// isScript reports whether the actor's behavior is a script (not a skill, a playbook or a person's).
func isScript(a *ir.Actor) bool { return !a.Skill && a.Script != nil && !a.IsHuman() }

// needsBun reports whether the actor's script runs with Bun: a .ts file, or a #! line naming bun.
func needsBun(a *ir.Actor) bool {
	if a.Skill || a.Script == nil {
		return false
	}
	return a.Script.Ext == ".ts" || a.Script.Program() == "bun"
}
