package local

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// A workflow playbook's session: its process is `autonomy playbook run` (or, after an approval,
// `autonomy playbook resume --continue ID`) over the installation's database; its stdout, the
// envelope, goes to a file the supervisor reads when it exits. An approval parks the session:
// paused, with no process, the pause's token hash held by the session (as a person's ask holds
// its redeem token), until Approve resumes or cancels it.

// inputRequired prefixes the reason of a session parked at an approval.
const inputRequired = "input-required: "

// envelopePath is where a workflow session's process writes its envelope.
func (pb *playbooks) envelopePath(id string) string {
	return pb.in.Path(StateDir + "/results/" + id + ".envelope.json")
}

// workflowArgv is the command of a workflow session: a run, or the continuation of an approved
// run when one waits for it, over the database at db. A step playbook's run continues from its
// checkpoint; tools gives its steps' agent command the session's MCP server.
func (pb *playbooks) workflowArgv(ctx context.Context, s store.Session, cfg *ActorConfig, workdir, db string, tools func([]string) ([]string, error)) ([]string, error) {
	exe := pb.exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("cannot find the autonomy binary to run the workflow: %v", err)
		}
	}
	cont := pb.continuing(s)
	if cont && cfg.Steps {
		// A step playbook's answered run continues from its checkpoint once its process took
		// the run the answer saved: a supervisor that died after that continues it with run.
		var err error
		if _, cont, err = pb.store.GetState(ctx, playproto.ContinueKey(s.ID)); err != nil {
			return nil, err
		}
	}
	if cont {
		return []string{exe, "playbook", "resume", "--state", db, "--continue", s.ID}, nil
	}
	argv := []string{exe, "playbook", "run", pb.in.Path(cfg.Behavior), "--state", db, "--session", s.ID, "--workspace", workdir}
	if s.Timeout > 0 {
		argv = append(argv, "--timeout-ms", strconv.FormatInt(s.Timeout.Milliseconds(), 10))
	}
	args := s.Params
	if !cfg.Steps {
		args = workflowArgs(args)
	}
	if len(args) > 0 {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		argv = append(argv, "--args-json", string(b), "--ignore-unknown-args")
	}
	for _, name := range cfg.Secrets {
		argv = append(argv, "--secret", name)
	}
	if cfg.Steps {
		return pb.stepsArgv(cfg, s.ID, argv, tools)
	}
	if len(cfg.MCP) > 0 {
		b, err := json.Marshal(cfg.MCP)
		if err != nil {
			return nil, err
		}
		argv = append(argv, "--mcp-servers", string(b))
	}
	if cfg.CLI != nil {
		for _, a := range cfg.CLI.Allow {
			argv = append(argv, "--cli-allow", a)
		}
		for _, d := range cfg.CLI.Deny {
			argv = append(argv, "--cli-deny", d)
		}
	}
	if cfg.Web != nil {
		for _, h := range cfg.Web.Allow {
			argv = append(argv, "--web-allow", h)
		}
	}
	return argv, nil
}

// continuing reports whether s resumes an approved run: its events say it was approved after
// it was launched.
func (pb *playbooks) continuing(s store.Session) bool {
	return strings.HasPrefix(s.Verified, "approved ") || strings.HasPrefix(s.Verified, "answered ")
}

// settleWorkflow ends (or parks) a workflow session from the envelope its process printed. It
// returns false when the session is parked, waiting for an approval.
func (pb *playbooks) settleWorkflow(ctx context.Context, s store.Session, log io.Writer, end func(ir.SessionStatus, string, string, *int), code *int) {
	path := pb.envelopePath(s.ID)
	raw, err := readCapped(path, pb.in.logMax())
	os.Remove(path) // it may hold a resume token: it is not kept
	var env playproto.Envelope
	if err == nil {
		err = json.Unmarshal(raw, &env)
	}
	if err != nil {
		end(ir.Failed, fmt.Sprintf("the workflow printed no envelope: %v", err), "", code)
		return
	}
	for _, o := range env.Output {
		fmt.Fprintf(log, "autonomy: step %s: %s%s\n", o.ID, o.Status, suffix(o.Reason))
	}
	switch {
	case !env.OK:
		msg := "the workflow failed"
		if env.Error != nil {
			msg += ": " + env.Error.Message
			fmt.Fprintf(log, "autonomy: %s\n", msg) // runner logs shows why, as runner get does
			for _, d := range env.Error.Diagnostics {
				fmt.Fprintf(log, "autonomy: %s\n", d)
			}
		}
		end(ir.Failed, msg, "", code)
	case env.Status == playproto.StatusOK:
		end(ir.Done, "", "the workflow finished ok", code)
	case env.Status == playproto.StatusCancelled:
		end(ir.Cancelled, "the workflow was cancelled", "", code)
	case env.Status == playproto.StatusNeedsApproval && env.RequiresApproval != nil:
		a := env.RequiresApproval
		preview := ""
		if a.Preview != "" {
			preview = "autonomy: preview:\n" + a.Preview + "\n"
		}
		pb.park(ctx, s, log, end, code, parking{step: a.Step, prompt: a.Prompt, token: a.ResumeToken, verb: "approve", how: "--approve", or: "or --deny to refuse it", preview: preview})
	default:
		end(ir.Failed, "the workflow printed an envelope with status "+strconv.Quote(env.Status), "", code)
	}
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// parking is what a parked session waits for.
type parking struct {
	step, prompt, token string
	// verb and how say how to answer it (approve, --approve): how is flags a shell reads as they
	// are printed, so the line can be pasted; or is the other answers, on a line of its own
	// ("or --deny to refuse"); preview is shown first.
	verb, how, or, preview string
}

// park parks s, its process ended, waiting for a person: paused, holding the pause's token hash,
// list showing the prompt; the log tells how to answer it.
func (pb *playbooks) park(ctx context.Context, s store.Session, log io.Writer, end func(ir.SessionStatus, string, string, *int), code *int, p parking) {
	// The token is in the log before the session shows as paused: whoever sees it paused finds it.
	fmt.Fprintf(log, "autonomy: input required at step %s: %s\n%s", p.step, p.prompt, p.preview)
	fmt.Fprintf(log, "autonomy: %s with: autonomy runner update %s --token %s %s\n", p.verb, s.ID, p.token, p.how)
	if p.or != "" {
		fmt.Fprintf(log, "autonomy: %s\n", p.or)
	}
	// newc8 answered from a fresh shell, without the model's key, and was refused.
	fmt.Fprintf(log, "autonomy: the session goes on in the answering shell's environment: answer where it could be launched (the model's key exported)\n")
	n, ok, err := pb.store.Modify(ctx, s.ID, []ir.SessionStatus{ir.Running}, func(m *store.Session) {
		m.Status, m.TokenHash, m.Reason = ir.Paused, playproto.HashToken(p.token), inputRequired+p.prompt
		m.PID, m.PIDStart, m.Verified = 0, 0, ""
	})
	if err != nil || !ok {
		// Cancelled meanwhile: the pause must not outlive it.
		_ = pb.store.DropPauses(ctx, s.ID)
		fmt.Fprintf(log, "autonomy: the session did not park (it ended meanwhile): the token above is void\n")
		if err != nil {
			end(ir.Failed, fmt.Sprintf("cannot park the session: %v", err), "", code)
		}
		return
	}
	_ = pb.store.Log(ctx, store.Event{Session: s.ID, Actor: n.Actor, Kind: "input-required", Message: fmt.Sprintf("step %s: %s", p.step, p.prompt)})
}

// parked reports whether s is a workflow session waiting at an approval, with no process.
func parked(s store.Session) bool {
	return s.Kind == "agent" && s.Status == ir.Paused && s.TokenHash != "" && s.PID == 0
}

// approve answers the approval a workflow session waits at: with its resume token, approve
// continues the run after the approval step (no completed step runs again), deny cancels it
// with no further side effect. A wrong or used token changes nothing.
func (pb *playbooks) approve(ctx context.Context, id, token string, approve bool, evidence string) (store.Session, error) {
	return pb.respond(ctx, id, token, playproto.Answer{Approve: approve, Deny: !approve}, evidence)
}

// respond answers what a parked session waits for: a workflow's approval (Approve or Deny), or a
// step playbook's elicitation (Text, Approve/Deny for a confirm, or Cancel). An answer that does
// not fit the elicitation is refused, and the token stays valid.
func (pb *playbooks) respond(ctx context.Context, id, token string, a playproto.Answer, evidence string) (store.Session, error) {
	s, ok, err := pb.store.Get(ctx, id)
	if err != nil {
		return s, err
	}
	if err := pb.caller.authorize(ctx, "update", s.Actor); err != nil {
		return s, err
	}
	if !ok {
		return s, &RefusedError{Msg: NoSession(id)}
	}
	if !parked(s) {
		msg := fmt.Sprintf("session %s is %s and waits for no approval", id, s.Status)
		if s.Kind == "human" && !s.Status.Ended() {
			// A person's ask is resolved, not approved (newc9 was told nothing more).
			msg += fmt.Sprintf(": a person's ask is resolved with autonomy runner update %s --token TOKEN --status done --evidence WHAT-YOU-CHECKED (or --status failed)", id)
		}
		return s, &RefusedError{Msg: msg}
	}
	hash := playproto.HashToken(token)
	if token == "" || subtle.ConstantTimeCompare([]byte(hash), []byte(s.TokenHash)) != 1 {
		_ = pb.store.Log(ctx, store.Event{Session: id, Actor: s.Actor, Kind: "refused", Message: "refused: the token does not resume this session (by " + pb.caller.describe() + ")"})
		return s, &RefusedError{Msg: "refused: the token does not resume this session"}
	}
	raw, owner, ok, err := pb.store.TakePause(ctx, hash)
	if err != nil {
		return s, err
	}
	if !ok || owner != id {
		return s, &RefusedError{Msg: fmt.Sprintf("refused: session %s was resumed or cancelled meanwhile", id)}
	}
	if isSignOff(raw) {
		if a.Text != "" || a.Cancel || a.Approve == a.Deny {
			_ = pb.store.SavePause(ctx, hash, id, raw)
			return s, &RefusedError{Msg: "refused: session " + id + " waits for a sign-off: answer it with --approve or --deny"}
		}
		return pb.signOff(ctx, s, raw, a.Approve, evidence)
	}
	if pb.host == nil {
		_ = pb.store.SavePause(ctx, hash, id, raw)
		return s, ErrNoPlaybookHost
	}
	// The session continues under a supervisor this process starts, with its environment:
	// where a launch of the actor would be refused (the agent CLI missing, the trial key
	// without its URL, a malformed AUTONOMY_LOCAL_AGENT), so is the answer, the token kept.
	if !a.Deny && !a.Cancel {
		// A step playbook's run continues with the agent its checkpoint saved, whatever
		// AUTONOMY_LOCAL_AGENT says here (a malformed one is refused all the same, as a launch
		// refuses it): its model's key is looked for as if it were unset.
		env := pb.env
		// An edited config or behavior would fail the session it continues, the answer lost.
		cfg, err := pb.in.verified(pb.in.Actor(s.Actor))
		if err == nil {
			if cfg.Steps {
				env = withoutAgentOverride(env)
			}
			err = pb.in.preflight(pb.env, cfg) // a malformed AUTONOMY_LOCAL_AGENT too
			if err == nil && cfg.Steps {
				err = pb.in.preflight(env, cfg) // the key of the agent the checkpoint saved
			}
		}
		if err != nil {
			_ = pb.store.SavePause(ctx, hash, id, raw)
			return s, &RefusedError{Msg: err.Error() + " (the session would continue with this command's environment and the installation as it is: answer where its launch could run; the token is still valid)"}
		}
		// A session that reached its model through the proxy before would go on without it
		// (the CLI's own login, unbudgeted, unsandboxed): from a shell without the key, refused.
		if why := pb.noProxyNow(ctx, env, s); why != "" {
			_ = pb.store.SavePause(ctx, hash, id, raw)
			return s, &RefusedError{Msg: "refused: session " + id + " " + why + " (answer from the shell that launched it, or export the key there; the token is still valid)"}
		}
	}
	by, now := pb.caller.describe(), pb.now().UTC()
	verb, approve := "approved", a.Approve
	if playproto.IsStepsState(raw) {
		if next, cancel, err := pb.answerSteps(ctx, id, hash, raw, a); err != nil {
			return s, err
		} else {
			raw, approve = next, !cancel
		}
		verb = "answered"
	} else if a.Text != "" || a.Cancel {
		_ = pb.store.SavePause(ctx, hash, id, raw)
		return s, &RefusedError{Msg: "refused: session " + id + " waits for an approval: answer it with --approve or --deny"}
	}
	step := pb.host.PausedStep(raw)
	if !approve {
		n, changed, err := pb.store.Modify(ctx, id, []ir.SessionStatus{ir.Paused}, func(m *store.Session) {
			m.Status, m.EndedAt, m.TokenHash = ir.Cancelled, now, ""
			m.Reason = fmt.Sprintf("denied at step %s by %s", step, by)
			if verb == "answered" {
				m.Reason = fmt.Sprintf("cancelled at step %s by %s", step, by)
			}
			m.Evidence, m.ResolvedBy = evidence, by
		})
		if err == nil && changed {
			_ = pb.store.Log(ctx, store.Event{Session: id, Actor: s.Actor, Kind: "denied", Message: n.Reason})
			_ = pb.store.DropPauses(ctx, id) // a step playbook's checkpoint
		}
		return n, err
	}
	if err := pb.store.SavePause(ctx, playproto.ContinueKey(id), id, raw); err != nil {
		return s, err
	}
	// This process holds the session, as its supervisor, until start hands it to the one it
	// starts: reconciliation meanwhile sees a runner alive, and neither fails it as one that
	// never started nor continues it with a second supervisor (resume.go).
	self := os.Getpid()
	selfStart, _ := proc.StartTime(self)
	n, changed, err := pb.store.Modify(ctx, id, []ir.SessionStatus{ir.Paused}, func(m *store.Session) {
		m.Status, m.TokenHash, m.Reason = ir.Running, "", ""
		m.Verified = fmt.Sprintf("%s at step %s by %s", verb, step, by)
		m.Evidence, m.ResolvedBy = evidence, by
		m.SupervisorPID, m.SupervisorStart = self, selfStart
	})
	if err != nil || !changed {
		_ = pb.store.DropPauses(ctx, id)
		if err == nil {
			err = &RefusedError{Msg: fmt.Sprintf("refused: session %s was cancelled meanwhile", id)}
		}
		return n, err
	}
	_ = pb.store.Log(ctx, store.Event{Session: id, Actor: s.Actor, Kind: verb, Message: n.Verified})
	return n, pb.ctl.start(ctx, n)
}

// Waiting is what a session waits for, for list: a workflow's approval prompt, the session
// holding the root workspace for a queued one, else "".
func Waiting(s store.Session) string {
	if parked(s) {
		return strings.TrimPrefix(s.Reason, inputRequired)
	}
	if Queued(s) {
		return strings.TrimPrefix(s.Reason, queuedPrefix)
	}
	return ""
}

// workflowArgs are the args a session's params give its workflow playbook: a param with no value
// (the launch gave no --text for subject.text) leaves the arg's default, as an empty
// workflow_dispatch input does on gh-actions (engine.RunStep). (A step playbook's inputs take
// the params as they are: an empty one is a value, as on gh-actions.)
func workflowArgs(params map[string]string) map[string]string {
	args := make(map[string]string, len(params))
	for k, v := range params {
		if v != "" {
			args[k] = v
		}
	}
	return args
}

// noProxyNow says why session s, which ran behind a model proxy before (its usage is recorded
// from the proxy's start), may not go on from a process of the environment env, which holds none
// of its agent's model keys: it would run with the CLI's own login, unbudgeted and unsandboxed.
// "" when it may.
func (pb *playbooks) noProxyNow(ctx context.Context, env []string, s store.Session) string {
	// An installation edited since (its config, its behavior) would fail it for good: it waits
	// for the compile that puts it back. (An actor no longer installed fails it, as it would.)
	cfg, err := pb.in.verified(pb.in.Actor(s.Actor))
	if errors.Is(err, errEdited) {
		return "cannot be continued here: " + err.Error()
	}
	warn := noModelCredential(pb.in, env, s.Actor)
	if warn == "" {
		return ""
	}
	_, used, err := pb.store.GetUsage(ctx, s.ID)
	switch {
	case err != nil:
		return "cannot be continued here: its usage cannot be read (" + err.Error() + ")"
	case used:
		return "reached its model through the model proxy before, and would go on without it: " + warn
	}
	// Nor does it go on with its CLI's own login where a launch would be refused.
	if cfg == nil {
		return ""
	}
	if ps, proxied := proxiedPresets(cfg, env); proxied {
		if msg := loginRefused(env, s.Actor, ps); msg != "" {
			return "would be refused here: " + msg
		}
	}
	return ""
}
