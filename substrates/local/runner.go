package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"time"

	"github.com/autonomyhq/autonomy/internal/egress"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// SessionEnv names the session a process runs in; a runner verb called with it set acts for
// that session's actor and is authorized against its capabilities.
const SessionEnv = "AUTONOMY_SESSION"

// StateEnv names, in a preset's session that works in the installation root on Linux, where the
// runner's state folder is writable inside the agent's jail: its own path there is read-only,
// and this second place is read-only too inside the agent's sandbox. The session's MCP server
// and a step playbook's run, which the CLI and the supervisor start outside that sandbox, open
// the store there (docs/local.md, "The wall"). A runner verb honors it only when it names this
// installation's state folder.
const StateEnv = "AUTONOMY_STATE_DIR"

// DirEnv is the installation root, set in every session so its runner calls find it.
const DirEnv = "AUTONOMY_DIR"

// Options configure a Runner.
type Options struct {
	// Now is the clock (time.Now when nil); tests give a fake one.
	Now func() time.Time
	// Session is the calling session's id (AUTONOMY_SESSION), "" for the operator.
	Session string
	// Detach starts every session under its own supervisor process (Exe runner supervise ID),
	// so it outlives this process: what the CLI does. Otherwise this process supervises.
	Detach bool
	// Exe is the autonomy binary that supervises detached sessions.
	Exe string
	// Env is the environment sessions inherit (os.Environ() when nil).
	Env []string
	// Engage tells people about asks (the attention file when nil).
	Engage Engager
	// Playbooks is the playbook runtimes the runner hosts (playbook/runtimes.Host; see PlaybookHost):
	// nil refuses overlays and answers to paused playbook runs with ErrNoPlaybookHost.
	Playbooks PlaybookHost
	// Minute is the unit of an actor's timeout (time.Minute when zero); the conformance battery
	// shortens it to probe timeouts in seconds.
	Minute time.Duration
	// State is where this process reaches the installation's state folder when not at its own
	// path (StateEnv); "" for its own path.
	State string
	// Confine identifies the caller by the chain of this process's ancestors too, not only by
	// Session: a process inside a session in flight is that session, never the operator
	// (wall.go). The autonomy command's runner verbs set it.
	Confine bool
	// Grace, when positive, is how long a session this runner stops has between TERM and KILL,
	// in place of the installation's policy.box.local.graceSeconds (tests shorten it).
	Grace time.Duration
}

// Runner is the local runner of one installation: it realizes the Runner contract for its agents
// (processes) and people (parked asks), fires the schedule, and keeps state in SQLite.
type Runner struct {
	In     *Install
	Store  *store.Store
	opts   Options
	caller *caller

	// asks is the human runner: the asks to people, and how people are told of them.
	asks *asks
	// supervisor is what this process holds to supervise sessions (supervisors.go).
	supervisor *supervisor
	// minute is the unit of timeoutMinutes: a minute, shorter in tests.
	minute time.Duration
	// events is the event source serve polls (WatchEvents; nil: none).
	events *EventSource
	// egressTest, set by tests only, adjusts a session's egress proxy (a test's resolver, its
	// loopback server admitted).
	egressTest func(*egress.Config)
	// blind: this process, called as a session, runs in a pid namespace made after a session
	// started (a session's sandbox, wall.go), where the sessions' processes are out of sight: it
	// reconciles nothing, which would take every session for dead.
	blind bool
	// gcLimits is when a collection of the runner's store of GitHub's objects repacks it
	// (codeflow_ghgc.go): defaultLimits unless a test lowers them.
	gcLimits storeLimits
}

// DBPath is the database of an installation.
func DBPath(dir string) string { return filepath.Join(dir, filepath.FromSlash(StateDir), "state.db") }

// New opens the runner of the installation in dir.
func New(dir string, opts Options) (*Runner, error) {
	if err := checkOS(); err != nil {
		return nil, err
	}
	in, err := Open(dir)
	if err != nil {
		return nil, err
	}
	if err := prepareState(in.Dir); err != nil {
		return nil, err
	}
	if opts.State != "" {
		if err := in.stateAlias(opts.State); err != nil {
			return nil, err
		}
	}
	st, err := store.Open(in.Path(StateDir + "/state.db"))
	if err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Env == nil {
		opts.Env = inheritedEnv()
	}
	if opts.Minute <= 0 {
		opts.Minute = time.Minute
	}
	in.graceOverride = opts.Grace
	r := &Runner{In: in, Store: st, opts: opts, minute: opts.Minute}
	r.supervisor = newSupervisor(in, st, opts.Now)
	engager := opts.Engage
	if engager == nil {
		engager = &AttentionFile{Path: in.Path(StateDir + "/attention.md"), Store: st, In: in}
	}
	r.asks = &asks{store: st, engager: engager, now: opts.Now, by: func() string { return r.caller.describe() }}
	if r.caller, err = callerOf(st, in, opts); err != nil {
		st.Close()
		return nil, err
	}
	if opts.Session != "" {
		_, _, r.blind = outOfSight(context.Background(), st, in)
	}
	if err := r.applyInstallPaused(context.Background()); err != nil {
		st.Close()
		return nil, err
	}
	return r, nil
}

// prepareState creates the state and worktree folders, each ignored by git: what the runner
// writes there is this machine's, never the repository's.
func prepareState(dir string) error {
	for _, d := range []string{StateDir, StateDir + "/logs", StateDir + "/results", WorktreeDir} {
		full := filepath.Join(dir, filepath.FromSlash(d))
		if err := os.MkdirAll(full, 0o700); err != nil {
			return err
		}
	}
	for _, d := range []string{StateDir, WorktreeDir} {
		ignore := filepath.Join(dir, filepath.FromSlash(d), ".gitignore")
		if _, err := os.Stat(ignore); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(ignore, []byte("# autonomy's runner state on this machine: never committed\n*\n"), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close waits for the sessions this process supervises, then closes the store.
func (r *Runner) Close() error {
	r.supervisor.set.wait()
	return r.Store.Close()
}

// Wait waits for the sessions this process supervises to end.
func (r *Runner) Wait() { r.supervisor.set.wait() }

// DeniedError is a runner verb refused to the calling session.
type DeniedError struct{ Msg string }

func (e *DeniedError) Error() string { return e.Msg }

// RefusedError is a request the runner will not carry out as asked: at capacity, a wrong
// token, a transition that does not apply. Nothing was changed.
type RefusedError struct{ Msg string }

func (e *RefusedError) Error() string { return e.Msg }

// Get returns one session, reconciled with its process. When the session ended but the store
// could not be written to record it, Get returns it as the store has it with an
// *UnrecordedError that says how it ended.
func (r *Runner) Get(ctx context.Context, id string) (store.Session, bool, error) {
	if err := r.caller.authorize(ctx, "list", ""); err != nil {
		return store.Session{}, false, err
	}
	s, ok, err := r.Store.Get(ctx, id)
	if err != nil || !ok {
		return s, ok, err
	}
	if scope := r.caller.listScope(); scope != "" && s.Actor != scope {
		return store.Session{}, false, r.caller.authorize(ctx, "list", s.Actor)
	}
	if s, err = r.reconcile(ctx, s); err != nil {
		return s, true, err
	}
	return s, true, r.shownUnrecorded(s)
}

// List returns the sessions in flight, or with all every session, oldest first. When some ended
// but the store could not be written to record it, List returns them all, those as the store has
// them, with an *UnrecordedError that says how each ended.
func (r *Runner) List(ctx context.Context, all bool) ([]store.Session, error) {
	if err := r.caller.authorize(ctx, "list", ""); err != nil {
		return nil, err
	}
	opts := store.ListOptions{All: all, Actor: r.caller.listScope()}
	ss, err := r.Store.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := r.stopPending(ctx); err != nil {
		return nil, err
	}
	changed := false
	var stale *UnrecordedError
	for i := range ss {
		if ss[i].Status.Ended() {
			continue
		}
		n, err := r.reconcile(ctx, ss[i])
		if err == nil {
			err = r.shownUnrecorded(n)
		}
		if err != nil && !joinUnrecorded(&stale, err) {
			return nil, err
		}
		if n.Status != ss[i].Status {
			changed = true
		}
		ss[i] = n
	}
	if changed && !all {
		kept := ss[:0]
		for _, s := range ss {
			if !s.Status.Ended() {
				kept = append(kept, s)
			}
		}
		ss = kept
	}
	if stale != nil {
		return ss, stale
	}
	return ss, nil
}

// Logs is the log file of a session (one whose end the store could not record has a log too).
// An ask to a person has none: refused.
func (r *Runner) Logs(ctx context.Context, id string) (store.Session, string, error) {
	s, path, err := r.logsOf(ctx, id)
	if err == nil && s.Kind == "human" {
		return s, "", &RefusedError{Msg: fmt.Sprintf("session %s is an ask to a person: it has no output (runner logs %s prints its events)", id, id)}
	}
	return s, path, err
}

// logsOf is Logs, but an ask to a person is found, with no log file ("").
func (r *Runner) logsOf(ctx context.Context, id string) (store.Session, string, error) {
	s, ok, err := r.Get(ctx, id)
	if err != nil && !isUnrecorded(err) {
		return s, "", err
	}
	if !ok {
		return s, "", &RefusedError{Msg: NoSession(id)}
	}
	if s.Kind == "human" {
		return s, "", nil
	}
	path, valid := r.In.logPath(s.ID)
	if !valid {
		return s, "", &RefusedError{Msg: fmt.Sprintf("%q is not a session id", s.ID)}
	}
	return s, path, nil
}

// Contract adapts the runner to ir.Runner.
func (r *Runner) Contract() ir.Runner { return contract{r} }

type contract struct{ r *Runner }

func (c contract) Launch(ctx context.Context, agent string, params ir.LaunchParams) (ir.Session, error) {
	res, err := c.r.Launch(ctx, LaunchRequest{Actor: agent, Params: params})
	s := toContract(res.Session)
	s.Token = res.Token
	return s, err
}

func (c contract) Get(ctx context.Context, id string) (ir.Session, bool, error) {
	s, ok, err := c.r.Get(ctx, id)
	return toContract(s), ok, err
}

func (c contract) List(ctx context.Context) ([]ir.Session, error) {
	ss, err := c.r.List(ctx, false)
	out := make([]ir.Session, 0, len(ss))
	for _, s := range ss {
		out = append(out, toContract(s))
	}
	return out, err
}

func (c contract) Update(ctx context.Context, id string, p ir.Patch) (bool, error) {
	_, err := c.r.Update(ctx, id, p)
	var refused *RefusedError
	if errors.As(err, &refused) {
		return false, nil
	}
	return err == nil, err
}

func (c contract) Cancel(ctx context.Context, id string) (bool, error) {
	return c.r.Cancel(ctx, id)
}

func toContract(s store.Session) ir.Session {
	return ir.Session{ID: s.ID, Agent: s.Actor, Status: s.Status, Ref: s.Ref, Params: s.Params}
}

// userName is who the operator is, for subject.actor and records.
func userName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if n := os.Getenv("USER"); n != "" {
		return n
	}
	return "operator"
}

// sortedKeys lists a map's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
