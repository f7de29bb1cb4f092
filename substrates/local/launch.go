package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/autonomyhq/autonomy/internal/handoff"
	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local/gitws"
)

// LaunchRequest is what runner launch is given.
type LaunchRequest struct {
	Actor string
	// Params set declared params by name, verbatim (--param K=V).
	Params map[string]string
	// The firing context: subject.ref, subject.actor, subject.text and trigger.kind.
	Ref, From, Text, Kind string
	// Branch runs the session in its own worktree of that branch.
	Branch string
	// Handoff types an ask to a person (package handoff); nil for an untyped ask. An agent's
	// launch takes none.
	Handoff *handoff.Spec
	// keepToken keeps an ask's token for its person (ask_person: no launcher holds it).
	keepToken func(store.Session, string) error
	// forAgent marks the runner's own launch on an agent's behalf (the code flow's reviewer):
	// subject.actorRole is then NONE, as for a session's launch, not the operator's OWNER.
	forAgent bool
}

// LaunchResult is a launched session, and for a person the one-time redeem token (shown once:
// only its hash is stored).
type LaunchResult struct {
	Session store.Session
	Token   string
}

// Launch starts an agent (or engages a person) and returns its running session.
func (r *Runner) Launch(ctx context.Context, req LaunchRequest) (LaunchResult, error) {
	if err := r.caller.authorize(ctx, "launch", req.Actor); err != nil {
		return LaunchResult{}, err
	}
	// An actor sees the text only under a param that takes it: a --text nothing forwards would be
	// dropped, and a person asked nothing, an agent told nothing.
	if cfg, err := r.In.Actor(req.Actor); err == nil && strings.TrimSpace(req.Text) != "" && !forwardsText(cfg) {
		who := "an agent"
		if cfg.Kind == "human" {
			who = "a person"
		}
		return LaunchResult{}, &RefusedError{Msg: fmt.Sprintf("actor %q is %s who would never see --text: no param of its dispatch trigger takes subject.text (give it one, e.g. triggers: [{ dispatch: true, params: { ASK: subject.text } }], or leave --text out)", cfg.Actor, who)}
	}
	return r.launchAs(ctx, req, r.caller.origin())
}

// forwardsText reports whether a dispatch of cfg forwards subject.text under a param (resolve).
func forwardsText(cfg *ActorConfig) bool {
	fired := firingTrigger(cfg, ir.Dispatch, -1)
	for _, p := range cfg.Params {
		if p.Source == "subject.text" && (fired == nil || slices.Contains(fired.Params, p.Name)) {
			return true
		}
	}
	return false
}

// launchAs launches for origin, authorized already (by Launch, or as the runner's own act).
func (r *Runner) launchAs(ctx context.Context, req LaunchRequest, origin string) (LaunchResult, error) {
	cfg, err := r.In.Actor(req.Actor)
	if err != nil {
		return LaunchResult{}, &RefusedError{Msg: err.Error()}
	}
	if req.Branch != "" {
		if cfg.Kind == "human" {
			return LaunchResult{}, &RefusedError{Msg: fmt.Sprintf("actor %q is a person: --branch does not apply", cfg.Actor)}
		}
		if err := gitws.ValidBranch(req.Branch); err != nil {
			return LaunchResult{}, &RefusedError{Msg: err.Error()}
		}
		if strings.HasPrefix(req.Branch, "refs/") {
			return LaunchResult{}, &RefusedError{Msg: fmt.Sprintf("--branch %s: name a branch, not a ref (%s)", req.Branch, strings.TrimPrefix(req.Branch, "refs/heads/"))}
		}
		if r.caller != nil {
			if why := r.sessionBranchRefused(ctx, req.Branch); why != "" {
				return LaunchResult{}, &RefusedError{Msg: fmt.Sprintf("cannot launch %s on --branch %s: %s", cfg.Actor, req.Branch, why)}
			}
		}
		// A branch checked out elsewhere cannot be the session's worktree's: refused now, not
		// recorded as a session that fails at once. (Outside a repository it fails, saying so.)
		if repo, err := gitws.Repo(r.In.Dir); err == nil {
			if at, main := gitws.CheckedOut(ctx, repo, req.Branch); at != "" {
				return LaunchResult{}, fmt.Errorf("cannot launch %s on --branch %s: %s", cfg.Actor, req.Branch, gitws.CheckedOutHint(req.Branch, at, main))
			}
		}
	}
	if err := checkHandoff(cfg, req.Handoff); err != nil {
		return LaunchResult{}, err
	}
	if err := refuseArchived(cfg); err != nil {
		return LaunchResult{}, err
	}
	if req.Kind == "" {
		req.Kind = "dispatch"
	}
	if err := r.refuseForgery(ctx, cfg, req); err != nil {
		return LaunchResult{}, err
	}
	params, err := r.resolve(cfg, firingTrigger(cfg, ir.Dispatch, -1), req)
	if err != nil {
		return LaunchResult{}, err
	}
	if err := r.In.verifyBehavior(cfg); err != nil {
		return LaunchResult{}, &RefusedError{Msg: err.Error()}
	}
	s := store.Session{Actor: cfg.Actor, Kind: cfg.Kind, Ref: req.Ref, Params: params, Trigger: req.Kind, Origin: origin, Branch: req.Branch}
	if cfg.Kind == "human" {
		return r.asks.engageTyped(ctx, cfg, s, req.Handoff, req.keepToken)
	}
	if cfg.Command != nil && cfg.Command.Script != nil {
		// A script whose interpreter is missing is refused now, with the install hint, rather
		// than recorded as a session that fails at once.
		if _, err := r.In.scriptArgv(cfg); err != nil {
			return LaunchResult{}, &RefusedError{Msg: err.Error()}
		}
	}
	if !r.leavesToCaller() {
		// (A session's launch is started by its caller's supervisor, in the runner's own
		// environment, where the preset's CLI is looked up: adopt.go.)
		if err := r.In.preflight(r.opts.Env, cfg); err != nil {
			return LaunchResult{}, err
		}
	}
	var admitted bool
	err = r.Store.Tx(ctx, func(tx *store.Tx) error {
		reason, err := held(tx, req.Ref)
		if err != nil {
			return err
		}
		if reason != "" {
			_ = tx.Log(store.Event{Actor: cfg.Actor, Kind: "refused", Message: reason})
			return &RefusedError{Msg: fmt.Sprintf("%q was not started: %s", cfg.Actor, reason)}
		}
		active := -1
		admitted, reason, err = r.admit(tx, cfg.Actor, false, &active)
		if err != nil || !admitted {
			if !admitted && err == nil {
				_ = tx.Log(store.Event{Actor: cfg.Actor, Kind: "refused", Message: reason})
				return &RefusedError{Msg: reason}
			}
			return err
		}
		return r.insert(tx, cfg, &s)
	})
	if err != nil {
		return LaunchResult{}, err
	}
	if err := r.start(ctx, s); err != nil {
		return LaunchResult{Session: s}, err
	}
	return LaunchResult{Session: s}, nil
}

// admit decides, inside the write transaction, whether an agent session of actor may start
// now: never more running agents than maxConcurrent, and by default one scheduled session per
// actor. active is the number of agent sessions in flight, counted once per transaction (-1:
// not yet) and raised by the caller for each session it inserts.
func (r *Runner) admit(tx *store.Tx, actor string, scheduled bool, active *int) (bool, string, error) {
	if max := r.In.Runner.MaxConcurrent; max > 0 {
		if *active < 0 {
			n, err := tx.Active("agent")
			if err != nil {
				return false, "", err
			}
			*active = n
		}
		if *active >= max {
			return false, fmt.Sprintf("at capacity: %d of maxConcurrent %d agent sessions are running; %q was not started (retry when one ends)", *active, max, actor), nil
		}
	}
	if scheduled && !r.In.Runner.Overlap {
		n, err := tx.ActorActive(actor, "schedule")
		if err != nil {
			return false, "", err
		}
		if n > 0 {
			return false, fmt.Sprintf("actor %q still has a scheduled session running", actor), nil
		}
	}
	return true, "", nil
}

// insert records a new running agent session with its log and timeout.
func (r *Runner) insert(tx *store.Tx, cfg *ActorConfig, s *store.Session) error {
	s.Status = ir.Running
	s.Timeout = time.Duration(cfg.TimeoutMinutes) * r.minute
	s.Workdir = r.In.Dir
	s.CreatedAt = r.opts.Now().UTC()
	if err := tx.Insert(s); err != nil {
		return err
	}
	n, _, err := tx.Modify(s.ID, nil, func(m *store.Session) {
		m.LogPath, _ = r.In.logPath(s.ID)
	})
	if err != nil {
		return err
	}
	*s = n
	return tx.Log(store.Event{Session: s.ID, Actor: s.Actor, Kind: "launched", Message: fmt.Sprintf("launched by %s (trigger %s)", r.caller.describe(), s.Trigger)})
}

// firingTrigger is the trigger that fired: the index given, or the actor's first of kind. nil
// when the actor has none of that kind (the operator launching a cron actor by hand).
func firingTrigger(cfg *ActorConfig, kind ir.TriggerKind, index int) *Trigger {
	if index >= 0 && index < len(cfg.Triggers) {
		return &cfg.Triggers[index]
	}
	for i := range cfg.Triggers {
		if cfg.Triggers[i].Kind == string(kind) {
			return &cfg.Triggers[i]
		}
	}
	return nil
}

// resolve builds a session's params: every param the actor declares, resolved from the firing
// context when the firing trigger forwards it (all of them when no trigger of the kind exists)
// and empty otherwise, then --param values, verbatim.
func (r *Runner) resolve(cfg *ActorConfig, fired *Trigger, req LaunchRequest) (ir.LaunchParams, error) {
	forwards := map[string]bool{}
	if fired != nil {
		for _, n := range fired.Params {
			forwards[n] = true
		}
	}
	from, role := req.From, "NONE"
	if r.caller == nil && !req.forAgent {
		role = "OWNER"
		if from == "" && req.Kind != "cron" {
			from = userName()
		}
	} else if from == "" {
		from = r.caller.session.Actor
	}
	ctxValue := map[string]string{"subject.ref": req.Ref, "subject.actor": from, "subject.actorRole": role, "subject.text": req.Text, "trigger.kind": req.Kind}
	if req.Kind == "cron" {
		ctxValue["subject.actorRole"] = ""
	}
	out := ir.LaunchParams{}
	declared := make([]string, 0, len(cfg.Params))
	for _, p := range cfg.Params {
		declared = append(declared, p.Name)
		v := ""
		if fired == nil || forwards[p.Name] {
			v = ctxValue[p.Source]
		}
		out[p.Name] = v
	}
	for _, k := range sortedKeys(req.Params) {
		if _, ok := out[k]; !ok {
			hint := "it declares no params"
			if len(declared) > 0 {
				hint = ir.Suggest(k, declared)
			}
			return nil, &RefusedError{Msg: fmt.Sprintf("actor %q declares no param %q (%s)", cfg.Actor, k, hint)}
		}
		out[k] = req.Params[k]
	}
	return out, nil
}

// start hands a recorded session to its supervisor: a detached process, or this one.
func (r *Runner) start(ctx context.Context, s store.Session) error {
	_, err := r.startFired(ctx, []store.Session{s})
	return err
}

// startFired hands recorded sessions to their supervisors and returns them as the store then
// has them: each detached supervisor is started first, then every supervisor is recorded in one
// transaction, and only then do the supervisors of this process run. A tick that fires ten
// sessions takes the database's write lock once for them, not ten times while the supervisors
// it started already queue for it. A session whose supervisor cannot start fails, saying why,
// and the others start all the same; the error names each that failed.
func (r *Runner) startFired(ctx context.Context, fired []store.Session) ([]store.Session, error) {
	if r.leavesToCaller() {
		return fired, nil // the calling session's supervisor starts them (adopt.go)
	}
	type supervised struct {
		id    string
		pid   int
		start uint64
	}
	var (
		errs []error
		sup  = make([]supervised, 0, len(fired))
		self = os.Getpid()
	)
	if !r.opts.Detach {
		start, _ := proc.StartTime(self)
		for _, s := range fired {
			r.supervisor.set.hold(s.ID)
			sup = append(sup, supervised{s.ID, self, start})
		}
	} else {
		// A few at once: the kernel's fork and exec of each, which the launcher waits for, is
		// most of what starting one costs.
		started, failed := make([]supervised, len(fired)), make([]error, len(fired))
		var wg sync.WaitGroup
		next := make(chan int)
		for range min(len(fired), startersAtOnce) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					started[i].id = fired[i].ID
					started[i].pid, started[i].start, failed[i] = r.startSupervisor(ctx, fired[i])
				}
			}()
		}
		for i := range fired {
			next <- i
		}
		close(next)
		wg.Wait()
		for i, v := range started {
			if failed[i] != nil {
				errs = append(errs, failed[i])
				continue
			}
			sup = append(sup, v)
		}
	}
	out := make([]store.Session, 0, len(sup))
	// The processes exist: a caller's cancel (serve stopping) must not leave them unrecorded.
	err := r.Store.Tx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		out = out[:0]
		for _, v := range sup {
			n, _, err := tx.Modify(v.id, nil, func(m *store.Session) {
				// Unless another process took it over meanwhile; this one holds it while it starts the
				// supervisor of a session it continues (resume.go).
				if m.SupervisorPID == 0 || m.SupervisorPID == self {
					m.SupervisorPID, m.SupervisorStart = v.pid, v.start
				}
			})
			if err != nil {
				return err
			}
			out = append(out, n)
		}
		return nil
	})
	if !r.opts.Detach {
		for _, v := range sup {
			if err != nil {
				r.supervisor.set.release(v.id)
				continue
			}
			id := v.id
			r.supervisor.set.run(id, func() { r.supervise(context.Background(), id) })
		}
	}
	if err != nil {
		return nil, errors.Join(append(errs, err)...)
	}
	return out, errors.Join(errs...)
}

// startersAtOnce is how many detached supervisors startFired starts at once.
const startersAtOnce = 4

// startSupervisor starts the detached supervisor of session s (runner supervise) and returns
// its pid and start time; when it cannot, the session fails saying why.
func (r *Runner) startSupervisor(ctx context.Context, s store.Session) (int, uint64, error) {
	exe := r.opts.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return 0, 0, r.failStart(ctx, s.ID, fmt.Sprintf("cannot find the autonomy binary to supervise it: %v", err))
		}
	}
	cmd := exec.Command(exe, "runner", "--dir", r.In.Dir, "supervise", s.ID)
	cmd.SysProcAttr = proc.Detach()
	cmd.Dir = r.In.Dir
	handed, err := passEnv(cmd, withoutSession(r.opts.Env))
	if err != nil {
		return 0, 0, r.failStart(ctx, s.ID, fmt.Sprintf("cannot start its supervisor: %v", err))
	}
	// What the supervisor says before it can record anything (an installation it cannot read)
	// is kept for the reconciliation that finds it gone (supervisorSaid).
	if path, ok := r.In.supervisorErrPath(s.ID); ok {
		if f, err := createNew(path, 0o600); err == nil {
			cmd.Stderr = f
			defer f.Close()
		}
	}
	err = cmd.Start()
	handed(err == nil)
	if err != nil {
		return 0, 0, r.failStart(ctx, s.ID, fmt.Sprintf("cannot start its supervisor: %v", err))
	}
	pid := cmd.Process.Pid
	start, _ := proc.StartTime(pid)
	r.supervisor.started.add(pid, start)
	_ = cmd.Process.Release()
	if r.supervisor.startedHook != nil {
		r.supervisor.startedHook(s.ID)
	}
	return pid, start, nil
}

// sessionBranchRefused says why a session may not launch an actor on branch ("" when it may): the
// code flow's target branch (what a session commits there lands unreviewed), or any branch while
// that target cannot be told, a branch under autonomy/ (the runner's own), a branch an open
// proposal is on (its review would be of what the new session commits), or one a remote's name
// starts (origin/main would shadow the remote-tracking branch).
func (r *Runner) sessionBranchRefused(ctx context.Context, branch string) string {
	repo, err := gitws.Repo(r.In.Dir)
	if err != nil {
		return ""
	}
	target, err := r.targetBranch(ctx, repo)
	if err != nil {
		// The target is not known now (the root's HEAD moved since it was pinned, or is
		// detached): the branch could be it, so none is given.
		return fmt.Sprintf("the code flow's target branch cannot be told (%v), and a session's --branch must not be it", err)
	}
	// Compared without case: on a file system that ignores it (macOS's), MAIN's ref is main's.
	if strings.EqualFold(branch, target) {
		return "it is the code flow's target branch: a session's work reaches it only through a reviewed proposal"
	}
	if strings.HasPrefix(strings.ToLower(branch), "autonomy/") {
		return "branches under autonomy/ are the runner's own, where it saves sessions' commits and pushes proposals"
	}
	if remotes, err := gitws.Git(ctx, repo, "remote"); err == nil {
		for _, rm := range strings.Fields(remotes) {
			if strings.HasPrefix(branch, rm+"/") {
				return fmt.Sprintf("it starts with the remote %s's name, and would shadow its remote-tracking branches", rm)
			}
		}
	}
	if ps, err := r.Store.Proposals(ctx, false, 0); err == nil {
		for _, p := range ps {
			if p.Branch == branch {
				return fmt.Sprintf("proposal %d is on it (%s): another session's commits there would be what its review reads", p.Seq, p.State)
			}
		}
	}
	return ""
}

// failStart ends a session that could not be started.
func (r *Runner) failStart(ctx context.Context, id, reason string) error {
	r.finish(ctx, id, ir.Failed, reason, "", nil)
	return fmt.Errorf("session %s: %s", id, reason)
}

// withoutSession drops the caller's session identity from an environment a supervisor inherits.
func withoutSession(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, SessionEnv+"=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}
