package local

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// A step playbook's session is a workflow session (workflow.go) whose process runs the playbook
// with the box's agent, one invocation per step: an @elicit parks it input-required like an
// approval, and Respond's answer continues it. Its ## ARTIFACTS land in ArtifactsDir.

// ArtifactsDir is where a step playbook session's artifacts are written, relative to the
// installation.
func ArtifactsDir(id string) string { return StateDir + "/results/" + id + ".artifacts" }

// stepsArgv adds to a step playbook session's run the agent every step runs, a preset's given
// the session's tools, and where its artifacts go.
func (pb *playbooks) stepsArgv(cfg *ActorConfig, id string, argv []string, tools func([]string) ([]string, error)) ([]string, error) {
	words, _, preset, err := pb.in.command(pb.env, cfg)
	if err == nil && preset {
		words, err = tools(words)
	}
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(words)
	if err != nil {
		return nil, err
	}
	argv = append(argv, "--agent-argv", string(b), "--artifacts-dir", pb.in.Path(ArtifactsDir(id)))
	if preset {
		argv = append(argv, "--agent", cfg.Command.Preset)
	}
	return argv, nil
}

// answerSteps applies a to the paused step playbook run raw (taken under hash): the state to
// continue, or cancel. An answer that does not fit puts the pause back and is refused.
func (pb *playbooks) answerSteps(ctx context.Context, id, hash string, raw []byte, a playproto.Answer) ([]byte, bool, error) {
	if a.Cancel {
		return raw, true, nil
	}
	next, err := pb.host.Answer(raw, a)
	if err != nil {
		if serr := pb.store.SavePause(ctx, hash, id, raw); serr != nil {
			return nil, false, serr
		}
		return nil, false, &RefusedError{Msg: fmt.Sprintf("refused: %v; the token is still valid", err)}
	}
	return next, false, nil
}

// settleSteps ends (or parks) a step playbook session from the envelope its process printed.
func (pb *playbooks) settleSteps(ctx context.Context, s store.Session, log io.Writer, end func(ir.SessionStatus, string, string, *int), code *int) {
	path := pb.envelopePath(s.ID)
	raw, err := os.ReadFile(path)
	os.Remove(path) // it may hold a resume token: it is not kept
	var env playproto.StepsEnvelope
	if err == nil {
		err = json.Unmarshal(raw, &env)
	}
	if err != nil {
		_ = pb.store.DropPauses(ctx, s.ID) // its checkpoint: a session that ended is not continued
		end(ir.Failed, fmt.Sprintf("the step playbook printed no envelope: %v", err), "", code)
		return
	}
	for _, o := range env.Output.Steps {
		fmt.Fprintf(log, "autonomy: step %s: %s%s\n", o.Step, o.Status, suffix(o.Reason))
	}
	switch {
	case !env.OK:
		_ = pb.store.DropPauses(ctx, s.ID)
		msg := "the step playbook failed"
		if env.Error != nil {
			msg += ": " + env.Error.Message
			for _, d := range env.Error.Diagnostics {
				fmt.Fprintf(log, "autonomy: %s\n", d)
			}
		}
		end(ir.Failed, msg, "", code)
	case env.Status == playproto.StatusOK:
		verified := "the step playbook finished ok"
		if a := env.Output.Artifact; a != nil && a.Path != "" {
			verified += "; artifact " + a.Path
		}
		end(ir.Done, "", verified, code)
	case env.Status == playproto.StatusCancelled:
		end(ir.Cancelled, "the step playbook was cancelled", "", code)
	case env.Status == playproto.StatusNeedsInput && env.RequiresInput != nil:
		q := env.RequiresInput
		prompt := q.Prompt
		if len(q.Options) > 0 {
			prompt += " [" + strings.Join(q.Options, "|") + "]"
		}
		how, or := answerHow(q.Kind, q.Options)
		pb.park(ctx, s, log, end, code, parking{step: q.Step, prompt: prompt, token: q.ResumeToken, verb: "answer", how: how, or: or})
	default:
		end(ir.Failed, "the step playbook printed an envelope with status "+strconv.Quote(env.Status), "", code)
	}
}

// answerHow is how a person answers an elicitation of kind with options: the flags to paste
// after runner update ID --token T, which a shell reads as printed, and the other answers.
func answerHow(kind string, options []string) (how, or string) {
	switch kind {
	case "confirm":
		return "--approve", "or --deny to say no"
	case "select":
		// Each choice goes to the shell as a word of its own: "api|ui" pasted was a pipe.
		words := make([]string, len(options))
		for i, o := range options {
			words[i] = cliout.ShellWord(o)
		}
		if len(words) == 0 {
			return "--answer TEXT", ""
		}
		if len(words) > 1 {
			or = "or --answer with another of: " + strings.Join(words[1:], " ")
		}
		return "--answer " + words[0], or
	}
	return "--answer TEXT", ""
}
