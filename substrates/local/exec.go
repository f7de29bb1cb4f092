package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/local/gitws"
)

// grace is how long a session has between TERM and KILL: the runner's Options.Grace when it set
// one (graceOverride), else the installation's policy.box.local.graceSeconds.
func (in *Install) grace() time.Duration {
	if in.graceOverride > 0 {
		return in.graceOverride
	}
	return time.Duration(in.Runner.GraceSeconds) * time.Second
}

// logMax is how many bytes of its most recent output a session's log keeps.
func (in *Install) logMax() int64 {
	if n := in.Runner.LogMaxBytes; n > 0 {
		return n
	}
	return DefaultLogMaxBytes
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
	_, changed, err := r.supervisor.outcomes.modifyEnd(ctx, o, func(m *store.Session) {
		m.Status, m.Reason, m.Verified, m.ExitCode, m.EndedAt = status, reason, verified, code, now
		if m.PID > 0 {
			m.StopBy = stopBy
		}
	}, func(tx *store.Tx, s store.Session) {
		// With its end, in one write: its line in the audit log, and its pauses and a step
		// playbook's checkpoint dropped (a session that ended is never continued).
		msg := string(status)
		if reason != "" {
			msg += ": " + reason
		}
		if verified != "" {
			msg += " (" + verified + ")"
		}
		_ = tx.Log(store.Event{Session: id, Actor: s.Actor, Kind: "ended", Message: msg})
		_ = tx.DropPauses(id)
	})
	r.playbooks().settleReview(ctx, id) // a reviewer's end settles the session it reviewed (capsule.go)
	if err != nil {
		return false, unrecorded(o, err)
	}
	if changed {
		r.afterEnd(ctx, id) // the code flow: a proposer's end proposes, a reviewer's settles (codeflow.go)
	}
	return changed, nil
}

// command is the argv that starts the actor, the file fed on its stdin, and whether the argv is
// a preset's (with placeholders to fill).
func (in *Install) command(env []string, cfg *ActorConfig) ([]string, string, bool, error) {
	if cfg.Command == nil || len(cfg.Command.Argv) == 0 {
		return nil, "", false, fmt.Errorf("actor %q has no command (compile again)", cfg.Actor)
	}
	if cfg.Command.Script != nil {
		argv, err := in.scriptArgv(cfg)
		return argv, "", false, err
	}
	argv := append([]string(nil), cfg.Command.Argv...)
	preset := cfg.Command.Preset != ""
	if cfg.Command.Box {
		override, err := AgentOverride(sessionenv.Lookup(env, AgentEnv))
		if err != nil {
			return nil, "", false, err
		}
		if override != nil {
			argv, preset = override, false
		}
	}
	for i, w := range argv {
		if strings.HasPrefix(w, dataDir+"/") {
			argv[i] = in.Path(w) // an installed file: never resolved against the session's workdir
		}
	}
	if !strings.Contains(argv[0], "/") {
		full, err := lookPath(env, argv[0])
		if err != nil && preset {
			if cached := presetFromCache(env, cfg.Command); cached != "" {
				full, err = cached, nil
			}
		}
		if err != nil {
			if preset {
				return nil, "", false, in.preflight(env, cfg)
			}
			return nil, "", false, fmt.Errorf("the agent command %q is not on PATH: install it, or set policy.box.local.agent (or %s) to one that is", argv[0], AgentEnv)
		}
		argv[0] = full
	}
	stdin := ""
	if cfg.Command.Stdin != "" {
		stdin = in.Path(cfg.Command.Stdin)
	}
	return argv, stdin, preset, nil
}

// sessionEnv is the env contract: the allowlisted part of the inherited environment (never what
// the runner owns or a param sets; sessionenv.go), then the actor's fixed env, the params
// verbatim, and the session's own.
func (in *Install) sessionEnv(inherited []string, s store.Session, cfg *ActorConfig, workdir, resultPath string) []string {
	drop := map[string]bool{}
	for k := range s.Params {
		drop[k] = true
	}
	env := make([]string, 0, len(inherited)+len(cfg.Env)+len(s.Params)+8)
	for _, kv := range inherited {
		k, _, _ := strings.Cut(kv, "=")
		if drop[k] || strings.HasPrefix(k, "AUTONOMY_") || !allowed(k, cfg) {
			continue
		}
		env = append(env, kv)
	}
	for _, k := range sortedKeys(cfg.Env) {
		v := cfg.Env[k]
		if k == substrates.PolicyEnv || strings.HasPrefix(v, dataDir+"/") {
			v = in.Path(v) // an installed file: absolute, the same from any workspace (an isolated worktree too)
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
		DirEnv+"="+in.Dir,
		"AUTONOMY_WORKSPACE="+workdir,
		"AUTONOMY_RESULT="+resultPath,
		"AUTONOMY_REF="+s.Ref,
		"AUTONOMY_BRANCH="+s.Branch,
		// A replace ref or a graft another session planted in the shared git directory must not
		// show this one (a reviewer, above all) other commits than the branch holds and the
		// runner merges (codeflow.go).
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_GRAFT_FILE="+os.DevNull,
	)
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GIT_CONFIG_COUNT=") }) {
		// The empty graft file above made git print a five-line hint about grafts in every
		// command of the session that reads commits. A session's commits are the agent's, not
		// signed with the operator's key, which a proxied session's jail hides anyway: with
		// commit.gpgSign set, every commit of it failed. (A GIT_CONFIG_COUNT of the actor's own
		// env is left as it is.)
		env = append(env, "GIT_CONFIG_COUNT=3",
			"GIT_CONFIG_KEY_0=advice.graftFileDeprecated", "GIT_CONFIG_VALUE_0=false",
			"GIT_CONFIG_KEY_1=commit.gpgSign", "GIT_CONFIG_VALUE_1=false",
			"GIT_CONFIG_KEY_2=tag.gpgSign", "GIT_CONFIG_VALUE_2=false")
	}
	if cfg.Result != "" {
		env = append(env, "AUTONOMY_RESULT_SCHEMA="+in.Path(cfg.Result))
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
	unseed, err := r.In.seed(path)
	if err != nil {
		_, _, _ = gitws.Remove(context.Background(), repo, path, base, "autonomy/"+s.Actor+"/"+s.ID)
		return "", nil, fmt.Errorf("cannot give its worktree the installation: %v", err)
	}
	return path, func() string {
		unseed()
		note, saved, err := gitws.Remove(context.Background(), repo, path, base, "autonomy/"+s.Actor+"/"+s.ID)
		r.recordSaved(s.ID, saved)
		r.supervisor.phase("saved", s.ID)
		if err != nil {
			return fmt.Sprintf("the worktree %s was not removed: %v", path, err)
		}
		return note
	}, nil
}

// recordSaved records, as session id's branch, the branch its isolated worktree's commits were
// saved as, and the commit they were saved at (nothing when none was created): what it proposes
// is that commit on that branch, the one the runner created, never another of a name alike
// (proposalBranch), nor what the branch was moved to after.
func (r *Runner) recordSaved(id string, saved gitws.Saved) {
	if saved.Branch == "" {
		return
	}
	ctx := context.Background()
	if _, _, err := r.Store.Modify(ctx, id, nil, func(m *store.Session) {
		if m.Branch == "" {
			m.Branch, m.SavedHead = saved.Branch, saved.Head
		}
	}); err != nil {
		// What it would propose is then not known: say where its commits are.
		_ = r.Store.Log(ctx, store.Event{Session: id, Kind: "worktree", Message: fmt.Sprintf("its commits are on the branch %s (at %s), which could not be recorded as its branch (%v): it proposes nothing; propose that branch yourself", saved.Branch, short(saved.Head), err)})
	}
}

// Update applies a status transition: pause or resume an agent (STOP or CONT to its group), or
// complete a person's ask with its redeem token and evidence.
func (r *Runner) Update(ctx context.Context, id string, p ir.Patch) (store.Session, error) {
	s, ok, err := r.Store.Get(ctx, id)
	if err != nil {
		return s, err
	}
	if !ok {
		if err := r.caller.authorize(ctx, "update", ""); err != nil {
			return s, err
		}
		return s, &RefusedError{Msg: NoSession(id)}
	}
	if err := r.caller.authorize(ctx, "update", s.Actor); err != nil {
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
		if err := r.operatorsAsk(ctx, s); err != nil {
			return s, err
		}
		n, err := r.asks.resolve(ctx, s, p)
		if n.Status.Ended() {
			r.afterEnd(ctx, n.ID) // a maintainer's act may let a proposal merge (codeflow.go)
		}
		return n, err
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
		_ = r.Store.Log(ctx, store.Event{Session: id, Actor: s.Actor, Kind: string(p.Status), Message: string(p.Status) + " by " + r.caller.describe()})
		return n, nil
	case ir.Done, ir.Failed:
		return s, &RefusedError{Msg: fmt.Sprintf("an agent session ends by itself: done when its process exits 0 with a verified result, failed otherwise; cancel %s to stop it", id)}
	}
	return s, &RefusedError{Msg: fmt.Sprintf("unknown status %q (one of: running, paused, cancelled, done, failed)", p.Status)}
}

// ErrNoSession is returned for an unknown session id.
var ErrNoSession = errors.New("no such session")
