package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/agent"
	"github.com/autonomyhq/autonomy/substrates/local/gitws"
	"github.com/autonomyhq/autonomy/substrates/local/proc"
	"github.com/autonomyhq/autonomy/substrates/local/store"
)

// grace is how long a session has between TERM and KILL.
func (r *Runner) grace() time.Duration { return time.Duration(r.In.Runner.GraceSeconds) * time.Second }

// logMax is how many bytes of its most recent output a session's log keeps.
func (r *Runner) logMax() int64 {
	if n := r.In.Runner.LogMaxBytes; n > 0 {
		return n
	}
	return DefaultLogMaxBytes
}

// Supervise runs a recorded session to its end: workspace, prelaunch, the process, its timeout,
// the verification of its result. It is what a detached supervisor process runs.
func (r *Runner) Supervise(ctx context.Context, id string) error {
	s, ok, err := r.Store.Get(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no session %s", id)
	}
	if s.Kind != "agent" || s.Status.Ended() {
		return nil
	}
	// This process supervises this one session: on Linux it is the subreaper of everything the
	// session starts, so a process that left the session's group (setsid) and was orphaned is
	// re-parented here, and killed once the session is over, rather than living on under init.
	subreaper := proc.BecomeSubreaper() == nil
	r.mu.Lock()
	r.supervising[id] = true
	r.mu.Unlock()
	r.supervise(ctx, id)
	r.done(id)
	if subreaper {
		if killed := proc.KillOrphans(r.otherSupervisor); len(killed) > 0 {
			msg := fmt.Sprintf("killed %d process(es) that had left its process group and outlived it: %v", len(killed), killed)
			_ = r.Store.Log(ctx, store.Event{Session: id, Actor: s.Actor, Kind: "escaped", Message: msg})
		}
	}
	return nil
}

func (r *Runner) supervise(ctx context.Context, id string) {
	s, ok, err := r.Store.Get(ctx, id)
	if err != nil || !ok || s.Status.Ended() {
		return
	}
	path, valid := r.logPath(id)
	if !valid {
		r.finish(ctx, id, ir.Failed, fmt.Sprintf("%q is not a session id", id), "", nil)
		return
	}
	logf, err := openCappedLog(path, r.logMax())
	if err != nil {
		r.finish(ctx, id, ir.Failed, fmt.Sprintf("cannot open its log: %v", err), "", nil)
		return
	}
	defer logf.Close()
	// Where its outcome is kept should the store be unwritable when it ends (outcome.go).
	r.reserveOutcome(id)
	defer r.settleOutcome(id)
	if s.PID > 0 && !r.resumeRun(ctx, s, logf) {
		// A continued session (resume.go): the run its dead supervisor started must be gone.
		r.finish(ctx, id, ir.Failed, fmt.Sprintf("cannot stop the run its dead supervisor started (process group %d)", s.PID), "", nil)
		return
	}
	// What autonomy installed is read, and the session prepared, while no agent works in the
	// installation root, which can change it until its session ends (rootlock.go).
	hold, ok := r.lockRoot(ctx, s, logf, false)
	if !ok {
		return
	}
	defer hold.release()
	cfg, err := r.In.ReloadActor(s.Actor)
	if err != nil {
		r.finish(ctx, id, ir.Failed, err.Error(), "", nil)
		return
	}

	r.phase("workspace", id)
	if r.cancelled(ctx, id) {
		return
	}
	workdir, cleanup, err := r.workspace(ctx, s, cfg)
	if err != nil {
		r.finish(ctx, id, ir.Failed, err.Error(), "", nil)
		return
	}
	// The session ends only once its worktree is dealt with: whoever sees it ended finds its
	// commits saved on their branch.
	var ending *func() bool
	end := func(status ir.SessionStatus, reason, verified string, code *int) {
		f := func() bool {
			ended, err := r.end(ctx, id, status, reason, verified, code, time.Time{})
			return ended || err != nil // false only when it had ended already
		}
		ending = &f
	}
	defer func() {
		if note := cleanup(); note != "" {
			fmt.Fprintf(logf, "autonomy: %s\n", note)
			_ = r.Store.Log(ctx, store.Event{Session: id, Actor: s.Actor, Kind: "worktree", Message: note})
		}
		if ending != nil && !(*ending)() {
			// It had ended already, cancelled: a stop may be under way, and is over now that the
			// group is gone. (Ending it here from running proves no stop was recorded: one is
			// only recorded with the end of a running session.)
			r.stopDone(ctx, id)
		}
	}()
	if cfg.Skill && workdir == r.In.Dir {
		// One agent at a time in the installation root, and nobody else starting meanwhile
		// (rootlock.go): others wait, queued. Its config is read again once it holds the root:
		// the one read before may be another agent's change, since put back.
		hold.release()
		if hold, ok = r.lockRoot(ctx, s, logf, true); !ok {
			return
		}
		defer hold.release()
		if cfg, err = r.In.ReloadActor(s.Actor); err != nil || !cfg.Skill || cfg.Workspace == "isolated" {
			msg := "the installation changed while it waited for the installation root; launch it again"
			if err != nil {
				msg = err.Error()
			}
			end(ir.Failed, msg, "", nil)
			return
		}
	}
	resultPath := r.In.Path(StateDir + "/results/" + id + ".json")
	env := r.sessionEnv(s, cfg, workdir, resultPath)

	// A cancel recorded while the session is prepared ends it before anything more starts: it is
	// checked after each step, and stops a prelaunch under way (prepare.go).
	r.phase("prelaunch", id)
	if r.cancelled(ctx, id) {
		return
	}
	if cfg.Prelaunch != "" {
		pre := exec.Command("/bin/sh", "-c", cfg.Prelaunch)
		pre.Dir, pre.Env = workdir, env
		pre.SysProcAttr = proc.SysProcAttr()
		stop, forget := r.watchCancel(id)
		err := runBounded(pre, logf, s.Timeout, r.grace(), stop)
		forget()
		if errors.Is(err, errCancelled) || r.cancelled(ctx, id) {
			fmt.Fprintf(logf, "autonomy: cancelled while preparing: the agent was not started\n")
			return
		}
		if err != nil {
			end(ir.Failed, fmt.Sprintf("prelaunch failed: %v", err), "", nil)
			return
		}
	}

	var argv []string
	var stdin string
	var preset bool
	if cfg.Workflow {
		argv, err = r.workflowArgv(ctx, s, cfg, workdir)
	} else {
		argv, stdin, preset, err = r.command(cfg)
	}
	if err == nil && preset {
		argv, err = r.fill(ctx, s, cfg, argv, env, workdir, resultPath)
	}
	if err == nil && preset {
		var removeTmp func()
		env, removeTmp, err = presetTemp(cfg, env) // removed once the session is over
		defer removeTmp()
	}
	if err != nil {
		end(ir.Failed, err.Error(), "", nil)
		return
	}
	if stdin != "" && cfg.Skill {
		if stdin, err = r.weave(ctx, s, cfg, stdin, logf); err != nil {
			end(ir.Failed, err.Error(), "", nil)
			return
		}
	}
	var snap installSnapshot
	if cfg.Skill && workdir == r.In.Dir {
		// The agent works in the installation itself: what autonomy installed there is put
		// back when it ends (guard.go).
		if snap, err = r.snapshotInstall(); err != nil {
			end(ir.Failed, fmt.Sprintf("cannot read the installation: %v (compile again)", err), "", nil)
			return
		}
	}
	var gsnap *gitSnapshot
	if cfg.Skill {
		// The git directory it commits into is writable: what your own git runs from there is
		// put back when it ends (gitguard.go).
		if common, err := gitws.CommonDir(ctx, workdir); err == nil {
			if gsnap, err = snapshotGit(common); err != nil {
				end(ir.Failed, fmt.Sprintf("cannot read the git directory %s: %v", common, err), "", nil)
				return
			}
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = workdir, env
	outPath := ""
	var resultOut *cappedOutput
	if cfg.Workflow || preset && agent.Output(cfg.Command.Output) == agent.OutputClaudeJSON {
		// Its stdout is one JSON object the runner reads when it exits: kept up to the log's
		// cap, never more (outcap.go).
		outPath = r.In.Path(StateDir + "/results/" + id + ".out.json")
		if cfg.Workflow {
			outPath = r.envelopePath(id)
		}
		if resultOut, err = captureOutput(outPath, r.logMax()); err != nil {
			end(ir.Failed, fmt.Sprintf("cannot open its output: %v", err), "", nil)
			return
		}
		defer resultOut.drain()
	}
	cmd.SysProcAttr = proc.SysProcAttr()
	out, drain, err := logf.pipeTo()
	if err != nil {
		end(ir.Failed, fmt.Sprintf("cannot make the pipe to its log: %v", err), "", nil)
		return
	}
	defer drain()
	cmd.Stdout, cmd.Stderr = out, out
	if resultOut != nil {
		cmd.Stdout = resultOut.writer()
	}
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			end(ir.Failed, fmt.Sprintf("cannot read its behavior: %v", err), "", nil)
			return
		}
		defer f.Close()
		cmd.Stdin = f
	}
	r.phase("start", id)
	started, startErr, err := r.startRecorded(ctx, id, cmd, workdir)
	out.Close() // the process has its own copy
	if resultOut != nil {
		resultOut.writer().Close()
	}
	if startErr != nil {
		end(ir.Failed, fmt.Sprintf("cannot start %s: %v", argv[0], startErr), "", nil)
		return
	}
	if !started {
		fmt.Fprintf(logf, "autonomy: cancelled while preparing: the agent was not started\n")
		return
	}
	if !hold.exclusive {
		hold.release() // started: what it reads of the installation is read
	}
	pid := cmd.Process.Pid
	if err != nil {
		// The store failed to record it: it must not run untracked.
		_ = proc.Terminate(pid, r.grace())
		_ = cmd.Wait()
		end(ir.Failed, fmt.Sprintf("cannot record its process: %v", err), "", nil)
		return
	}

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	waitErr, timedOut := r.watch(id, pid, s.Timeout, exited, logf)
	// The leader is gone; whatever it left running in its group goes with it, and then the
	// last of its output is in the log.
	_ = proc.Kill(pid)
	drain()
	if resultOut != nil {
		resultOut.drain()
	}
	code := exitCode(cmd.ProcessState)
	tampered := r.putBack(id, snap, gsnap)
	if len(tampered) > 0 {
		msg := strings.Join(tampered, "; ")
		fmt.Fprintf(logf, "autonomy: %s\n", msg)
		_ = r.Store.Log(ctx, store.Event{Session: id, Actor: s.Actor, Kind: "tampered", Message: msg})
		end(ir.Failed, msg, "", code)
		return
	}
	if resultOut != nil && !timedOut {
		if err := resultOut.problem(); err != nil {
			if cfg.Workflow {
				os.Remove(outPath) // an envelope may hold a resume token: it is not kept
			}
			fmt.Fprintf(logf, "autonomy: %v\n", err)
			end(ir.Failed, err.Error(), "", code)
			return
		}
	}
	switch {
	case timedOut:
		end(ir.Failed, fmt.Sprintf("timed out after %s (TERM, then KILL after %s)", s.Timeout, r.grace()), "", code)
	case cfg.Steps:
		r.settleSteps(ctx, s, logf, end, code)
	case cfg.Workflow:
		r.settleWorkflow(ctx, s, logf, end, code)
	case waitErr != nil:
		end(ir.Failed, underMethod(cfg, describeExit(waitErr, cmd.ProcessState)), "", code)
	default:
		if outPath != "" {
			if err := collect(cfg.Command.Output, outPath, resultPath, cfg.Result != "", r.logMax(), logf); err != nil {
				end(ir.Failed, "exit status 0 but "+err.Error(), "", code)
				return
			}
		}
		status, reason, verified := r.verify(cfg, resultPath)
		r.holdToMethod(ctx, s, cfg, resultPath, logf, end, code, status, reason, verified)
	}
}

func exitCode(ps *os.ProcessState) *int {
	if ps == nil {
		return nil
	}
	c := ps.ExitCode()
	return &c
}

func describeExit(err error, ps *os.ProcessState) string {
	if ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("killed by signal %s", ws.Signal())
		}
		return fmt.Sprintf("exit status %d", ps.ExitCode())
	}
	return err.Error()
}

// finish ends a session that is still in flight; one that already ended (cancelled while it
// ran) keeps its status.
func (r *Runner) finish(ctx context.Context, id string, status ir.SessionStatus, reason, verified string, code *int) {
	_, _ = r.end(ctx, id, status, reason, verified, code, time.Time{})
}

// end is finish that also records a stop under way when stopBy is set (see store.Session.StopBy).
// It says whether it ended the session (false: it had ended already, or the store failed), and
// why the store failed (an *UnrecordedError).
func (r *Runner) end(ctx context.Context, id string, status ir.SessionStatus, reason, verified string, code *int, stopBy time.Time) (bool, error) {
	now := r.opts.Now().UTC()
	o := outcome{Session: id, Status: status, Reason: reason, Verified: verified, ExitCode: code, EndedAt: now}
	s, changed, err := r.modifyEnd(ctx, o, func(m *store.Session) {
		m.Status, m.Reason, m.Verified, m.ExitCode, m.EndedAt = status, reason, verified, code, now
		if m.PID > 0 {
			m.StopBy = stopBy
		}
	})
	if err == nil && changed {
		msg := string(status)
		if reason != "" {
			msg += ": " + reason
		}
		if verified != "" {
			msg += " (" + verified + ")"
		}
		_ = r.Store.Log(ctx, store.Event{Session: id, Actor: s.Actor, Kind: "ended", Message: msg})
		// Its pauses and a step playbook's checkpoint: a session that ended is never continued.
		_ = r.Store.DropPauses(ctx, id)
	}
	r.settleReview(ctx, id) // a reviewer's end settles the session it reviewed (capsule.go)
	if err != nil {
		return false, unrecorded(o, err)
	}
	return changed, nil
}

// command is the argv that starts the actor, the file fed on its stdin, and whether the argv is
// a preset's (with placeholders to fill).
func (r *Runner) command(cfg *ActorConfig) ([]string, string, bool, error) {
	if cfg.Command == nil || len(cfg.Command.Argv) == 0 {
		return nil, "", false, fmt.Errorf("actor %q has no command (compile again)", cfg.Actor)
	}
	if cfg.Command.Script != nil {
		argv, err := r.scriptArgv(cfg)
		return argv, "", false, err
	}
	argv := append([]string(nil), cfg.Command.Argv...)
	preset := cfg.Command.Preset != ""
	if cfg.Command.Box {
		override, err := AgentOverride(lookupEnv(r.opts.Env, AgentEnv))
		if err != nil {
			return nil, "", false, err
		}
		if override != nil {
			argv, preset = override, false
		}
	}
	for i, w := range argv {
		if strings.HasPrefix(w, dataDir+"/") {
			argv[i] = r.In.Path(w) // an installed file: never resolved against the session's workdir
		}
	}
	if !strings.Contains(argv[0], "/") {
		full, err := lookPath(r.opts.Env, argv[0])
		if err != nil {
			if preset {
				return nil, "", false, r.preflight(cfg)
			}
			return nil, "", false, fmt.Errorf("the agent command %q is not on PATH: install it, or set policy.box.local.agent (or %s) to one that is", argv[0], AgentEnv)
		}
		argv[0] = full
	}
	stdin := ""
	if cfg.Command.Stdin != "" {
		stdin = r.In.Path(cfg.Command.Stdin)
	}
	return argv, stdin, preset, nil
}

func lookupEnv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// sessionEnv is the env contract: the inherited environment without anything the runner owns
// or a param sets, then the actor's fixed env, the params verbatim, and the session's own.
func (r *Runner) sessionEnv(s store.Session, cfg *ActorConfig, workdir, resultPath string) []string {
	drop := map[string]bool{}
	for k := range s.Params {
		drop[k] = true
	}
	env := make([]string, 0, len(r.opts.Env)+len(cfg.Env)+len(s.Params)+8)
	for _, kv := range r.opts.Env {
		k, _, _ := strings.Cut(kv, "=")
		if drop[k] || strings.HasPrefix(k, "AUTONOMY_") {
			continue
		}
		env = append(env, kv)
	}
	for _, k := range sortedKeys(cfg.Env) {
		v := cfg.Env[k]
		if k == substrates.PolicyEnv || strings.HasPrefix(v, dataDir+"/") {
			v = r.In.Path(v) // an installed file: absolute, the same from any workspace (an isolated worktree too)
		}
		env = append(env, k+"="+v)
	}
	for _, k := range sortedKeys(s.Params) {
		env = append(env, k+"="+s.Params[k])
	}
	forward, _ := json.Marshal(s.Params)
	if s.Params == nil {
		forward = []byte("{}")
	}
	env = append(env,
		SessionEnv+"="+s.ID,
		"AUTONOMY_FORWARD="+string(forward),
		DirEnv+"="+r.In.Dir,
		"AUTONOMY_WORKSPACE="+workdir,
		"AUTONOMY_RESULT="+resultPath,
		"AUTONOMY_REF="+s.Ref,
		"AUTONOMY_BRANCH="+s.Branch,
	)
	if cfg.Result != "" {
		env = append(env, "AUTONOMY_RESULT_SCHEMA="+r.In.Path(cfg.Result))
	}
	return env
}

// workspace is where the session runs: the installation root, or for an isolated actor or a
// --branch a git worktree of its own, removed (and its commits kept) when the session ends.
func (r *Runner) workspace(ctx context.Context, s store.Session, cfg *ActorConfig) (string, func() string, error) {
	if cfg.Workspace != "isolated" && s.Branch == "" {
		return r.In.Dir, func() string { return "" }, nil
	}
	repo, err := gitws.Repo(r.In.Dir)
	if err != nil {
		return "", nil, err
	}
	path := r.In.Path(WorktreeDir + "/" + s.ID)
	base, err := gitws.Add(ctx, repo, path, s.Branch)
	if err != nil {
		return "", nil, fmt.Errorf("cannot create its worktree: %v", err)
	}
	if _, _, err := r.Store.Modify(ctx, s.ID, nil, func(m *store.Session) { m.Workdir, m.Worktree = path, true }); err != nil {
		return "", nil, err
	}
	unseed, err := r.seed(path)
	if err != nil {
		_, _ = gitws.Remove(context.Background(), repo, path, base, "autonomy/"+s.Actor+"/"+s.ID)
		return "", nil, fmt.Errorf("cannot give its worktree the installation: %v", err)
	}
	return path, func() string {
		unseed()
		note, err := gitws.Remove(context.Background(), repo, path, base, "autonomy/"+s.Actor+"/"+s.ID)
		if err != nil {
			return fmt.Sprintf("the worktree %s was not removed: %v", path, err)
		}
		return note
	}, nil
}

// Update applies a status transition: pause or resume an agent (STOP or CONT to its group), or
// complete a person's ask with its redeem token and evidence.
func (r *Runner) Update(ctx context.Context, id string, p ir.Patch) (store.Session, error) {
	s, ok, err := r.Store.Get(ctx, id)
	if err != nil {
		return s, err
	}
	if !ok {
		if err := r.authorize(ctx, "update", ""); err != nil {
			return s, err
		}
		return s, &RefusedError{Msg: fmt.Sprintf("no session %s", id)}
	}
	if err := r.authorize(ctx, "update", s.Actor); err != nil {
		return s, err
	}
	if s.Status.Ended() {
		return s, &RefusedError{Msg: fmt.Sprintf("session %s already ended %s; it never changes again", id, s.Status)}
	}
	if p.Status == ir.Cancelled {
		if _, err := r.Cancel(ctx, id); err != nil {
			return s, err
		}
		n, _, err := r.Store.Get(ctx, id)
		return n, err
	}
	if s.Kind == "human" {
		return r.resolveHuman(ctx, s, p)
	}
	if parked(s) {
		return s, &RefusedError{Msg: fmt.Sprintf("session %s waits for an approval (%s): answer it with --token T --approve or --deny", id, strings.TrimPrefix(s.Reason, inputRequired))}
	}
	switch p.Status {
	case ir.Paused, ir.Running:
		from, signal := ir.Running, proc.Pause
		if p.Status == ir.Running {
			from, signal = ir.Paused, proc.Resume
		}
		n, changed, err := r.Store.Modify(ctx, id, []ir.SessionStatus{from}, func(m *store.Session) { m.Status = p.Status })
		if err != nil {
			return n, err
		}
		if !changed {
			return n, &RefusedError{Msg: fmt.Sprintf("session %s is %s, not %s", id, n.Status, from)}
		}
		if sessionGroup(n) { // its leader may be gone, a process started for it not
			if err := signal(n.PID); err != nil {
				return n, err
			}
		}
		_ = r.Store.Log(ctx, store.Event{Session: id, Actor: s.Actor, Kind: string(p.Status), Message: string(p.Status) + " by " + r.describe()})
		return n, nil
	case ir.Done, ir.Failed:
		return s, &RefusedError{Msg: fmt.Sprintf("an agent session ends by itself: done when its process exits 0 with a verified result, failed otherwise; cancel %s to stop it", id)}
	}
	return s, &RefusedError{Msg: fmt.Sprintf("unknown status %q (one of: running, paused, cancelled, done, failed)", p.Status)}
}

// ErrNoSession is returned for an unknown session id.
var ErrNoSession = errors.New("no such session")
