package shim

import (
	"path"
	"strings"

	"github.com/autonomyhq/autonomy/internal/tools"
)

// RunnerScript is the reference implementation's runner CLI, as its skills call it.
const RunnerScript = "scripts/runner.ts"

// runnerNotes are the reference runner's flags a launch reads and ignores, and why.
var runnerNotes = map[string]string{
	"workspace": "the actor's execution.workspace decides it",
	"fence":     "the fleet's pause is the substrate's",
}

// Bun reads the words of a bun command line (without "bun"): `bun [run] scripts/runner.ts
// launch ACTOR [--ref R] [--NAME VALUE]...` is a launch, as the reference's runner CLI reads it
// (--ref is the subject; any other --NAME VALUE is the param NAME); its other verbs are refused
// with the tool to use; anything else is passed to the real bun.
func Bun(args []string) (Call, error) {
	words := args
	if len(words) > 0 && words[0] == "run" {
		words = words[1:]
	}
	if len(words) == 0 || path.Clean(words[0]) != RunnerScript {
		return Call{Pass: true}, nil
	}
	const cmd = "bun " + RunnerScript
	words = words[1:]
	if len(words) == 0 {
		return Call{}, refuse(cmd, "name a verb: launch ACTOR --ref ITEM")
	}
	switch words[0] {
	case "launch":
		return runnerLaunch(cmd+" launch", words[1:])
	case "list", "get", "status":
		return Call{}, refuse(cmd+" "+words[0], "use the list_sessions tool (agent:list), or autonomy runner %s", words[0])
	case "cancel":
		return Call{}, refuse(cmd+" cancel", "use the cancel_session tool (agent:cancel)")
	case "update", "pause", "resume", "retry":
		return Call{}, refuse(cmd+" "+words[0], "use the update_session tool (agent:update)")
	}
	return Call{}, refuse(cmd, "%q is not a verb the shim maps; launch ACTOR --ref ITEM is", words[0])
}

// runnerLaunch reads launch's words: the actor, then --ref, the ignored flags, and params.
func runnerLaunch(cmd string, words []string) (Call, error) {
	in := tools.LaunchInput{Params: map[string]string{}}
	var notes []string
	var branch string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "--") {
			if in.Actor != "" {
				return Call{}, refuse(cmd, "unexpected %q after the actor %s; params are --NAME VALUE", w, in.Actor)
			}
			in.Actor = w
			continue
		}
		name, value, inline := strings.Cut(w[2:], "=")
		if !inline {
			if i+1 >= len(words) || strings.HasPrefix(words[i+1], "--") {
				return Call{}, refuse(cmd, "%s needs a value", w)
			}
			i++
			value = words[i]
		}
		switch {
		case name == "ref":
			if in.Subject != "" {
				return Call{}, refuse(cmd, "--ref is given twice")
			}
			in.Subject = value
		case name == "branch":
			if branch != "" {
				return Call{}, refuse(cmd, "--branch is given twice")
			}
			if branch = value; branch == "" {
				return Call{}, refuse(cmd, "--branch needs a branch name")
			}
		case runnerNotes[name] != "":
			notes = append(notes, "--"+name+" is ignored: "+runnerNotes[name])
		default:
			if err := param(cmd, "--"+name, name+"="+value, in.Params); err != nil {
				return Call{}, err
			}
		}
	}
	if in.Actor == "" {
		return Call{}, refuse(cmd, "name the actor to launch, e.g. %s develop --ref 12", cmd)
	}
	return Call{Tool: tools.Launch, Input: in, Branch: branch, Notes: notes}, nil
}
