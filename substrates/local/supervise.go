package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local/gitws"
)

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
	if err := r.mayTakeOver(ctx, s); err != nil {
		return err
	}
	// This process supervises this one session: on Linux it is the subreaper of everything the
	// session starts, so a process that left the session's group (setsid) and was orphaned is
	// re-parented here, and killed once the session is over, rather than living on under init.
	r.supervisor.subreaper = proc.BecomeSubreaper() == nil
	r.supervisor.set.hold(id)
	r.supervise(ctx, id)
	r.supervisor.set.release(id)
	r.killEscaped(ctx, s, 0)
	// Its session recorded its own end: what it said on stderr is kept only when there is some.
	if path, ok := r.In.supervisorErrPath(id); ok {
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			_ = os.Remove(path)
		}
	}
	return nil
}

// killEscaped kills what session s left running outside its process group, group (0 when not
// known), when this process is the subreaper of what it started (Supervise), and records it;
// what is still in its group is killed as it is, not recorded. The session's end calls it
// before the guards put back the git directory and the installation, so that nothing it left
// running changes them again afterwards; Supervise once more at the very end.
func (r *Runner) killEscaped(ctx context.Context, s store.Session, group int) {
	if !r.supervisor.subreaper {
		return
	}
	if killed := proc.KillOrphans(r.otherSupervisor, group); len(killed) > 0 {
		msg := fmt.Sprintf("killed %d process(es) that had left its process group and outlived it: %v", len(killed), killed)
		_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "escaped", Message: msg})
	}
}

// supervision is one session supervise runs, as its steps share it. Each step that holds
// something until the session is over (a lock, a worktree, a pipe) calls the next step and
// lets go when that returns, so everything is let go in the reverse of the order it was taken.
type supervision struct {
	r       *Runner
	s       store.Session
	logf    *cappedLog
	cfg     *ActorConfig
	workdir string
	// env is the session's environment; resultPath where its result is written.
	env        []string
	resultPath string
	// ownResult is where the session writes its result (AUTONOMY_RESULT): in a folder of its own,
	// the only part of the results folder its jail leaves writable; adopted as resultPath once
	// it exits (ownResultPath, adoptResult).
	ownResult string
	// end ends the session once its worktree is dealt with (run).
	end func(status ir.SessionStatus, reason, verified string, code *int)
	// snap and gsnap are what is put back when the agent ends (guard).
	snap  installSnapshot
	gsnap *gitSnapshot
	// resultOut keeps the process's stdout at outPath when the runner reads it as it exits.
	outPath   string
	resultOut *cappedOutput
	// stateAt is where the agent's jail has the runner's state folder writable, for the
	// session's MCP server and a step playbook's run, when its own path is read-only there
	// ("" when it is not: egress_unix.go).
	stateAt string
	// proxy is the session's model proxy, nil when none runs (modelproxy.go).
	proxy *sessionProxy
	// closeDoor stops serving the session's door (door.go); it may be called more than once.
	closeDoor func()
}

// supervise runs session id, read from the store, to its end: it opens its log, takes the root
// workspace lock, and prepares its workspace; run does the rest.
func (r *Runner) supervise(ctx context.Context, id string) {
	s, ok, err := r.Store.Get(ctx, id)
	if err != nil || !ok || s.Status.Ended() {
		return
	}
	recordPidNS(r.In)
	path, valid := r.In.logPath(id)
	if !valid {
		r.finish(ctx, id, ir.Failed, fmt.Sprintf("%q is not a session id", id), "", nil)
		return
	}
	logf, err := openCappedLog(path, r.In.logMax())
	if err != nil {
		r.finish(ctx, id, ir.Failed, fmt.Sprintf("cannot open its log: %v", err), "", nil)
		return
	}
	defer logf.Close()
	// Where its outcome is kept should the store be unwritable when it ends (outcome.go).
	r.supervisor.outcomes.reserve(id)
	defer r.supervisor.outcomes.settle(id)
	if s.PID > 0 && !r.playbooks().resumeRun(ctx, s, logf) {
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
	cfg, err := r.In.verified(r.In.ReloadActor(s.Actor))
	if err != nil {
		r.finish(ctx, id, ir.Failed, err.Error(), "", nil)
		return
	}

	r.supervisor.phase("workspace", id)
	if r.supervisor.cancelled(ctx, id) {
		return
	}
	workdir, cleanup, err := r.workspace(ctx, s, cfg)
	if err != nil {
		r.finish(ctx, id, ir.Failed, err.Error(), "", nil)
		return
	}
	sv := &supervision{r: r, s: s, logf: logf, cfg: cfg, workdir: workdir}
	sv.run(ctx, hold, cleanup)
}

// run takes the session from its workspace, which cleanup deals with, to its end: it takes the
// installation root for an agent that works there, and runs the prelaunch; launch does the rest.
func (sv *supervision) run(ctx context.Context, hold *rootHold, cleanup func() string) {
	r, s, id := sv.r, sv.s, sv.s.ID
	// The session ends only once its worktree is dealt with: whoever sees it ended finds its
	// commits saved on their branch.
	var ending func() bool
	sv.end = func(status ir.SessionStatus, reason, verified string, code *int) {
		ending = func() bool {
			ended, err := r.end(ctx, id, status, reason, verified, code, time.Time{})
			return ended || err != nil // false only when it had ended already
		}
	}
	defer func() {
		if note := cleanup(); note != "" {
			fmt.Fprintf(sv.logf, "autonomy: %s\n", note)
			_ = r.Store.Log(ctx, store.Event{Session: id, Actor: s.Actor, Kind: "worktree", Message: note})
		}
		if ending != nil && !ending() {
			// It had ended already, cancelled: a stop may be under way, and is over now that the
			// group is gone. (Ending it here from running proves no stop was recorded: one is
			// only recorded with the end of a running session.)
			r.stopDone(ctx, id)
		}
	}()
	if sv.cfg.Skill && sv.workdir == r.In.Dir {
		// One agent at a time in the installation root, and nobody else starting meanwhile
		// (rootlock.go): others wait, queued. Its config is read again once it holds the root:
		// the one read before may be another agent's change, since put back.
		hold.release()
		var ok bool
		if hold, ok = r.lockRoot(ctx, s, sv.logf, true); !ok {
			return
		}
		defer hold.release()
		var err error
		sv.cfg, err = r.In.verified(r.In.ReloadActor(s.Actor))
		if err != nil || !sv.cfg.Skill || sv.cfg.Workspace == "isolated" {
			msg := "the installation changed while it waited for the installation root; launch it again"
			if err != nil {
				msg = err.Error()
			}
			sv.end(ir.Failed, msg, "", nil)
			return
		}
	}
	sv.resultPath = r.In.Path(StateDir + "/results/" + id + ".json")
	var err error
	if sv.ownResult, err = r.In.ownResultPath(id); err != nil {
		sv.end(ir.Failed, err.Error(), "", nil)
		return
	}
	defer os.RemoveAll(filepath.Dir(sv.ownResult))
	sv.env = r.In.sessionEnv(r.opts.Env, s, sv.cfg, sv.workdir, sv.ownResult)
	bin, err := r.selfBin()
	if err != nil {
		sv.end(ir.Failed, err.Error(), "", nil)
		return
	}
	sv.env = withPathFirst(sv.env, bin)
	if sv.cfg.Steps {
		// A step playbook's run makes each step's temporary folder in its TMPDIR, and removes it
		// itself unless its process is killed: this one is removed with what it left, and a
		// continued session's dead supervisor's first (stepstmp.go).
		var removeTmp func()
		if sv.env, removeTmp, err = r.In.stepsTemp(r.opts.Env, sv.env, id); err != nil {
			sv.end(ir.Failed, err.Error(), "", nil)
			return
		}
		defer removeTmp()
	}

	// A cancel recorded while the session is prepared ends it before anything more starts: it is
	// checked after each step, and stops a prelaunch under way (prepare.go).
	r.supervisor.phase("prelaunch", id)
	if r.supervisor.cancelled(ctx, id) {
		return
	}
	if msg := sv.loginRefusal(); msg != "" {
		sv.end(ir.Failed, msg, "", nil)
		return
	}
	if sv.prelaunch(ctx) {
		sv.launch(ctx, hold)
	}
}

// prelaunch runs the actor's prelaunch command, if it has one, in its workspace. It is false
// when the session goes no further: cancelled, or failed.
func (sv *supervision) prelaunch(ctx context.Context) bool {
	r, cfg, logf, id := sv.r, sv.cfg, sv.logf, sv.s.ID
	if cfg.Prelaunch == "" {
		return true
	}
	pre := exec.Command("/bin/sh", "-c", cfg.Prelaunch)
	pre.Dir, pre.Env = sv.workdir, sv.env
	pre.SysProcAttr = proc.SysProcAttr()
	stop, forget := r.supervisor.watchCancel(id)
	err := runBounded(pre, logf, sv.s.Timeout, r.In.grace(), stop)
	forget()
	if errors.Is(err, errCancelled) || r.supervisor.cancelled(ctx, id) {
		fmt.Fprintf(logf, "autonomy: cancelled while preparing: the agent was not started\n")
		return false
	}
	if err != nil {
		sv.end(ir.Failed, fmt.Sprintf("prelaunch failed: %v", err), "", nil)
		return false
	}
	return true
}

// launch starts a proxied session's model proxy, makes the command that starts the agent, and what its
// end puts back; start does the rest.
func (sv *supervision) launch(ctx context.Context, hold *rootHold) {
	stopProxy, ok := sv.startProxy(ctx) // a preset's model proxy, up while the agent runs
	defer stopProxy()
	if !ok {
		return
	}
	sv.wallState()
	argv, stdin, preset, err := sv.command(ctx)
	if err == nil && preset {
		var removeTmp func()
		sv.env, removeTmp, err = presetTemp(sv.cfg, sv.env) // removed once the session is over
		defer removeTmp()
	}
	if err == nil {
		// A proxied session's agent (a preset's, your agent command, a step playbook's whole run):
		// its network is the proxies alone (egress_unix.go).
		var unconfine func()
		argv, unconfine, err = sv.confine(ctx, argv, preset)
		defer unconfine()
	}
	if err != nil {
		sv.end(ir.Failed, err.Error(), "", nil)
		return
	}
	sv.r.logSuccessor(ctx, sv.s, sv.cfg, sv.logf)
	if stdin != "" && sv.cfg.Skill {
		if stdin, err = sv.r.weave(ctx, sv.s, sv.cfg, stdin, sv.logf); err != nil {
			sv.end(ir.Failed, err.Error(), "", nil)
			return
		}
		if stdin, err = sv.r.In.withContract(sv.s, sv.cfg, stdin); err != nil {
			sv.end(ir.Failed, err.Error(), "", nil)
			return
		}
	}
	if sv.guard(ctx) {
		sv.openDoor(ctx) // a walled session's shell asks its runner verbs here (door.go)
		defer sv.closeDoor()
		sv.start(ctx, hold, argv, stdin, preset)
	}
}

// command is the argv that starts the agent, filled when it is a preset's, the file fed on its
// stdin, and whether the argv is a preset's.
func (sv *supervision) command(ctx context.Context) (argv []string, stdin string, preset bool, err error) {
	if sv.cfg.Workflow {
		argv, err = sv.r.playbooks().workflowArgv(ctx, sv.s, sv.cfg, sv.workdir, sv.dbPath(), sv.withTools)
	} else {
		argv, stdin, preset, err = sv.r.In.command(sv.r.opts.Env, sv.cfg)
	}
	if err == nil && preset {
		argv, err = sv.withTools(argv) // the session's MCP server (tools.go)
	} else if err == nil && !sv.cfg.Workflow && sv.cfg.Command.Script == nil {
		err = sv.mcpConfig() // your own agent command's: a configuration file (tools.go)
	}
	if err == nil && preset {
		argv, err = sv.r.In.fill(ctx, sv.s, sv.cfg, argv, sv.env, sv.workdir, sv.ownResult)
	}
	return argv, stdin, preset, err
}

// guard takes the snapshots of what is put back when the agent ends. It is false when the
// session failed.
func (sv *supervision) guard(ctx context.Context) bool {
	var err error
	if sv.cfg.Skill && sv.workdir == sv.r.In.Dir {
		// The agent works in the installation itself: what autonomy installed there is put
		// back when it ends (guard.go).
		if sv.snap, err = sv.r.In.snapshotInstall(); err != nil {
			sv.end(ir.Failed, fmt.Sprintf("cannot read the installation: %v (compile again)", err), "", nil)
			return false
		}
	}
	if sv.cfg.Skill {
		// The git directory it commits into is writable: what your own git runs from there is
		// put back when it ends (gitguard.go).
		if common, err := gitws.CommonDir(ctx, sv.workdir); err == nil {
			if sv.gsnap, err = snapshotGit(common); err != nil {
				sv.end(ir.Failed, fmt.Sprintf("cannot read the git directory %s: %v", common, err), "", nil)
				return false
			}
		}
	}
	return true
}

// start starts the agent, argv with stdin fed from the file stdin, its output piped to its log
// (its stdout kept apart when the runner reads it), and records its process; settle does the
// rest.
func (sv *supervision) start(ctx context.Context, hold *rootHold, argv []string, stdin string, preset bool) {
	r, cfg, logf, id := sv.r, sv.cfg, sv.logf, sv.s.ID
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = sv.workdir, sv.env
	var err error
	if cfg.Workflow || preset && agent.Output(cfg.Command.Output) == agent.OutputClaudeJSON {
		// Its stdout is one JSON object the runner reads when it exits: kept up to the log's
		// cap, never more (outcap.go).
		sv.outPath = r.In.Path(StateDir + "/results/" + id + ".out.json")
		if cfg.Workflow {
			sv.outPath = r.playbooks().envelopePath(id)
		}
		if sv.resultOut, err = captureOutput(sv.outPath, r.In.logMax()); err != nil {
			sv.end(ir.Failed, fmt.Sprintf("cannot open its output: %v", err), "", nil)
			return
		}
		defer sv.resultOut.drain()
	}
	cmd.SysProcAttr = proc.SysProcAttr()
	out, drain, err := logf.pipeTo()
	if err != nil {
		sv.end(ir.Failed, fmt.Sprintf("cannot make the pipe to its log: %v", err), "", nil)
		return
	}
	defer drain()
	cmd.Stdout, cmd.Stderr = out, out
	if sv.resultOut != nil {
		cmd.Stdout = sv.resultOut.writer()
	}
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			sv.end(ir.Failed, fmt.Sprintf("cannot read its behavior: %v", err), "", nil)
			return
		}
		defer f.Close()
		cmd.Stdin = f
	}
	r.supervisor.phase("start", id)
	started, startErr, err := r.supervisor.startRecorded(ctx, id, cmd, sv.workdir, logf)
	out.Close() // the process has its own copy
	if sv.resultOut != nil {
		sv.resultOut.writer().Close()
	}
	if startErr != nil {
		sv.end(ir.Failed, fmt.Sprintf("cannot start %s: %v", argv[0], startErr), "", nil)
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
		_ = proc.Terminate(pid, r.In.grace())
		_ = cmd.Wait()
		sv.end(ir.Failed, fmt.Sprintf("cannot record its process: %v", err), "", nil)
		return
	}
	sv.settle(ctx, cmd, drain)
}

// settle waits for the agent started as cmd (or its timeout), drains its output, puts back what
// it may not change, and ends the session with its verified result.
func (sv *supervision) settle(ctx context.Context, cmd *exec.Cmd, drain func()) {
	r, s, cfg, logf, end := sv.r, sv.s, sv.cfg, sv.logf, sv.end
	id, pid := s.ID, cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	adopted := r.adoptWhile(ctx, id, logf) // the sessions it launches start from here (adopt.go)
	applied := r.githubWhile(ctx, s)       // its effects on GitHub are applied from here (hands_github.go)
	waitErr, timedOut := r.supervisor.watch(id, pid, s.Timeout, r.In.grace(), exited, logf)
	sv.closeDoor() // what it launched through its door is adopted below
	adopted()
	applied()
	// The leader is gone; whatever it left running in its group goes with it, and then the
	// last of its output is in the log.
	_ = proc.Kill(pid)
	drain()
	if sv.resultOut != nil {
		sv.resultOut.drain()
	}
	code := exitCode(cmd.ProcessState)
	r.killEscaped(ctx, s, pid) // before the put-back: an escaped process could change it all again
	tampered := r.In.putBack(id, sv.snap, sv.gsnap)
	if len(tampered) > 0 {
		msg := strings.Join(tampered, "; ")
		fmt.Fprintf(logf, "autonomy: %s\n", msg)
		_ = r.Store.Log(ctx, store.Event{Session: id, Actor: s.Actor, Kind: "tampered", Message: msg})
		end(ir.Failed, msg, "", code)
		return
	}
	if sv.resultOut != nil && !timedOut {
		if err := sv.resultOut.problem(); err != nil {
			if cfg.Workflow {
				os.Remove(sv.outPath) // an envelope may hold a resume token: it is not kept
			}
			fmt.Fprintf(logf, "autonomy: %v\n", err)
			end(ir.Failed, err.Error(), "", code)
			return
		}
	}
	switch {
	case timedOut:
		end(ir.Failed, fmt.Sprintf("timed out after %s (TERM, then KILL after %s)", s.Timeout, r.In.grace()), "", code)
	case cfg.Steps:
		r.playbooks().settleSteps(ctx, s, logf, end, code)
	case cfg.Workflow:
		r.playbooks().settleWorkflow(ctx, s, logf, end, code)
	case waitErr != nil:
		end(ir.Failed, underMethod(cfg, describeExit(waitErr, cmd.ProcessState)), "", code)
	default:
		if sv.outPath == "" {
			if err := adoptResult(sv.ownResult, sv.resultPath); err != nil {
				end(ir.Failed, "exit status 0 but "+err.Error(), "", code)
				return
			}
		} else {
			// Its result is what it printed (collected), whatever it left where AUTONOMY_RESULT says.
			if err := collect(cfg.Command.Output, sv.outPath, sv.resultPath, structured(cfg), r.In.logMax(), logf); err != nil {
				end(ir.Failed, "exit status 0 but "+err.Error(), "", code)
				return
			}
		}
		sub, err := r.submitted(ctx, id)
		if err != nil {
			end(ir.Failed, "exit status 0 but the session's result cannot be read: "+err.Error(), "", code)
			return
		}
		status, reason, verified := r.In.verify(cfg, sv.resultPath, sub)
		r.playbooks().holdToMethod(ctx, s, cfg, sv.resultPath, logf, end, code, status, reason, verified)
	}
}
