package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/internal/tools"
)

// The wall between a session and the operator (docs/local.md, "What a prompt-injected agent can
// and cannot do"). A runner verb run by the autonomy command learns who calls it from two
// things: AUTONOMY_SESSION, which any process can set or unset, and the chain of its ancestors,
// which no process can leave (an orphan is re-parented to its session's supervisor, a
// subreaper). A process that descends from a session in flight (its agent process or its
// supervisor) is that session, whatever its environment says: without AUTONOMY_SESSION it is
// refused, never the operator; naming another session, it is refused as a forgery.

// callerOf identifies the caller of a runner opened with opts: the operator (nil), or a session.
// A session calling from inside its sandbox records what it launches, which its supervisor
// starts outside the sandbox (adopt.go), as for any session's launch.
func callerOf(st *store.Store, in *Install, opts Options) (*caller, error) {
	inSandbox := false
	if opts.Confine {
		var err error
		if inSandbox, err = confine(st, in, opts.Session); err != nil {
			return nil, err
		}
	}
	if opts.Session == "" {
		return nil, nil
	}
	if inSandbox {
		if err := sandboxedAs(st, in, opts.Session); err != nil {
			return nil, err
		}
	}
	if inSandbox && !stateWritable(in) {
		return nil, &DeniedError{Msg: fmt.Sprintf("the runner's state is read-only inside the sandbox of session %s (its workspace is isolated, or this process is not that session's: "+
			"a session's shell asks its runner verbs through its own door alone, docs/local.md, \"The wall\"): "+
			"act through the session's tools (%s, %s, %s, %s), which the runner realizes outside it", opts.Session,
			tools.Launch, tools.ListSessions, tools.UpdateSession, tools.CancelSession)}
	}
	return identify(st, in, opts.Session)
}

// confine applies the wall to this process, which claims session ("": the operator): it is
// refused when it is inside a session other than the one it names, or, naming none, when it
// may be inside one. inSandbox: its ancestry is out of sight (a session's sandbox, or another
// pid namespace), so what it names is taken on its word, within sandboxedAs.
func confine(st *store.Store, in *Install, session string) (inSandbox bool, err error) {
	ctx := context.Background()
	if s, why, blind := outOfSight(ctx, st, in); blind {
		if session == "" {
			return false, &DeniedError{Msg: fmt.Sprintf("%s while session %s (actor %q) is in flight: it may be inside that session's sandbox, "+
				"and %s is unset: a runner verb from inside a session never acts as the operator. Act through the session's tools (%s, %s, %s, %s), "+
				"or run it from where the runner runs", why, s.ID, s.Actor, SessionEnv, tools.Launch, tools.ListSessions, tools.UpdateSession, tools.CancelSession)}
		}
		return true, nil
	}
	inside, err := enclosing(ctx, st, os.Getpid())
	if err != nil {
		return false, err
	}
	if len(inside) > 0 && session == "" {
		return false, &DeniedError{Msg: fmt.Sprintf("this process runs inside session %s (actor %q), and %s is unset: a runner verb from inside a session never acts as the operator. "+
			"Act through the session's tools (%s, %s, %s, %s), or keep %s=%s", inside[0].ID, inside[0].Actor, SessionEnv,
			tools.Launch, tools.ListSessions, tools.UpdateSession, tools.CancelSession, SessionEnv, inside[0].ID)}
	}
	if len(inside) > 0 && !insideOf(inside, session) {
		return false, &DeniedError{Msg: fmt.Sprintf("%s=%s, but this process runs inside session %s (actor %q): a session acts only as itself", SessionEnv, session, inside[0].ID, inside[0].Actor)}
	}
	return false, nil
}

// outOfSight reports whether this process cannot see the ancestry of the sessions in flight
// (s, one of them), and why: its /proc is not its own pid namespace's (a sandbox's pid
// namespace nested in another over the outer /proc, or `unshare -p` without `--mount-proc`),
// it runs in another pid namespace than the one the supervisors recorded, or its namespace was
// made after a session started (a preset's sandbox).
func outOfSight(ctx context.Context, st *store.Store, in *Install) (s store.Session, why string, blind bool) {
	live, err := st.List(ctx, store.ListOptions{})
	if err != nil {
		return store.Session{}, "", false
	}
	return outOfSightOf(live, in)
}

// outOfSightOf is outOfSight over live, the sessions in flight as the caller just read them: one
// read serves every check.
func outOfSightOf(live []store.Session, in *Install) (s store.Session, why string, blind bool) {
	if len(live) == 0 {
		return store.Session{}, "", false
	}
	ns, err := proc.PidNS()
	if err != nil {
		return live[0], fmt.Sprintf("%v (its ancestry is out of sight)", err), true
	}
	if foreignNS(in, ns) {
		return live[0], "this process runs in a pid namespace other than the runner's", true
	}
	if s, in := sandboxed(live); in {
		return s, fmt.Sprintf("this process runs in a pid namespace made after session %s started", s.ID), true
	}
	return store.Session{}, "", false
}

// stateWritable reports whether this process can write the runner's state folder.
func stateWritable(in *Install) bool { return writableDir(in.Path(StateDir)) }

// enclosing is the nearest session in flight that process pid descends from: one whose agent
// process or supervisor is among its ancestors. A supervisor that runs several sessions (an
// in-process runner's) makes the answer ambiguous: inside are all of them, and the caller names
// which (insideOf).
func enclosing(ctx context.Context, st *store.Store, pid int) ([]store.Session, error) {
	// A session's process is started inside the write transaction that records its pid
	// (startRecorded): an empty write transaction waits for that one to commit, so the list
	// below holds the pid of whichever process this one descends from. (It fails where the
	// store is read-only, a sandbox, where the ancestors are out of sight anyway.)
	_ = st.Tx(ctx, func(*store.Tx) error { return nil })
	live, err := st.List(ctx, store.ListOptions{})
	if err != nil || len(live) == 0 {
		return nil, err
	}
	for _, a := range proc.Ancestors(pid) {
		var in []store.Session
		for _, s := range live {
			if s.PID > 0 && (proc.Named{PID: s.PID, Start: s.PIDStart}) == a ||
				s.SupervisorPID > 0 && (proc.Named{PID: s.SupervisorPID, Start: s.SupervisorStart}) == a {
				in = append(in, s)
			}
		}
		if len(in) > 0 {
			return in, nil
		}
	}
	return nil, nil
}

// insideOf reports whether id is one of the sessions a process is inside.
func insideOf(in []store.Session, id string) bool {
	return slices.ContainsFunc(in, func(s store.Session) bool { return s.ID == id })
}

// sandboxed reports whether this process runs inside a session's sandbox whose pid namespace
// hides its ancestors (codex's and Claude Code's bubblewrap both make one per command): the first
// process of its pid namespace started after the supervisor of a session in flight (of live),
// which the first process of the runner's namespace (init, or a container's) never does. s is
// that session.
func sandboxed(live []store.Session) (store.Session, bool) {
	first, err := proc.StartTime(1)
	if err != nil {
		return store.Session{}, false
	}
	for _, s := range live {
		if s.SupervisorPID > 0 && s.SupervisorStart > 0 && first > s.SupervisorStart {
			return s, true
		}
	}
	return store.Session{}, false
}

// pidNSFile records the pid namespace the runner's supervisors run in (proc.PidNS), written by
// each supervisor as it starts a session.
const pidNSFile = "pidns"

// recordPidNS records the pid namespace this process, a supervisor, runs in.
func recordPidNS(in *Install) {
	ns, err := proc.PidNS()
	if err != nil || ns == 0 {
		return
	}
	dir := in.Path(StateDir)
	text := strconv.FormatUint(ns, 10) + "\n"
	if b, err := os.ReadFile(filepath.Join(dir, pidNSFile)); err == nil && string(b) == text {
		return
	}
	f, err := os.CreateTemp(dir, ".pidns-*")
	if err != nil {
		return
	}
	_, werr := f.WriteString(text)
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), filepath.Join(dir, pidNSFile)) != nil {
		os.Remove(f.Name())
	}
}

// foreignNS reports whether this process, in pid namespace ns, runs in another pid namespace
// than the one the runner's supervisors recorded.
func foreignNS(in *Install, ns uint64) bool {
	b, err := readSmall(filepath.Join(in.Path(StateDir), pidNSFile))
	if err != nil {
		return false
	}
	runner, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return err == nil && runner != 0 && runner != ns
}

// readSmall reads at most 64 bytes of path, never through a symbolic link.
func readSmall(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64))
}

// sandboxedAs checks that a process whose ancestry is out of sight (a pid namespace of its own)
// may claim session id: only a session whose agent runs in a preset's sandbox, which makes such
// namespaces, runs its commands in one. A session that runs without one (a script, your own
// agent command) runs in the runner's pid namespace, where its ancestry shows; a process that
// claims it from another namespace is not it.
func sandboxedAs(st *store.Store, in *Install, id string) error {
	s, ok, err := st.Get(context.Background(), id)
	if err != nil || !ok {
		return err
	}
	cfg, err := in.Actor(s.Actor)
	if err != nil {
		return err
	}
	if (cfg.Skill || cfg.Steps) && cfg.Command != nil && cfg.Command.Preset != "" {
		return nil
	}
	return &DeniedError{Msg: fmt.Sprintf("%s=%s names session %s (actor %q), which runs without a sandbox, in the runner's pid namespace; "+
		"this process runs in a pid namespace of its own, out of the runner's sight: it is not that session", SessionEnv, id, s.ID, s.Actor)}
}
