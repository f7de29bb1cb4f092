package local

import (
	"context"
	"fmt"
	"os"

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
// handOff is true for a session calling from inside its sandbox, whose launches its supervisor
// starts (handoff.go).
func callerOf(st *store.Store, in *Install, opts Options) (c *caller, handOff bool, err error) {
	if opts.Confine {
		inside, ok, err := enclosing(context.Background(), st, os.Getpid())
		if err != nil {
			return nil, false, err
		}
		if !ok {
			if s, in := sandboxed(context.Background(), st); in && opts.Session == "" {
				return nil, false, &DeniedError{Msg: fmt.Sprintf("this process runs in a pid namespace made after session %s (actor %q) started: it is inside a session's sandbox, "+
					"and %s is unset: a runner verb from inside a session never acts as the operator. Act through the session's tools (%s, %s, %s, %s)",
					s.ID, s.Actor, SessionEnv, tools.Launch, tools.ListSessions, tools.UpdateSession, tools.CancelSession)}
			} else if in {
				handOff = true
			}
		}
		if ok && opts.Session == "" {
			return nil, false, &DeniedError{Msg: fmt.Sprintf("this process runs inside session %s (actor %q), and %s is unset: a runner verb from inside a session never acts as the operator. "+
				"Act through the session's tools (%s, %s, %s, %s), or keep %s=%s", inside.ID, inside.Actor, SessionEnv,
				tools.Launch, tools.ListSessions, tools.UpdateSession, tools.CancelSession, SessionEnv, inside.ID)}
		}
		if ok && opts.Session != inside.ID {
			return nil, false, &DeniedError{Msg: fmt.Sprintf("%s=%s, but this process runs inside session %s (actor %q): a session acts only as itself", SessionEnv, opts.Session, inside.ID, inside.Actor)}
		}
	}
	if opts.Session == "" {
		return nil, false, nil
	}
	if handOff && !stateWritable(in) {
		return nil, false, &DeniedError{Msg: fmt.Sprintf("the runner's state is read-only inside the sandbox of session %s (its workspace is isolated): "+
			"act through the session's tools (%s, %s, %s, %s), which the runner realizes outside it", opts.Session,
			tools.Launch, tools.ListSessions, tools.UpdateSession, tools.CancelSession)}
	}
	c, err = identify(st, in, opts.Session)
	return c, handOff, err
}

// stateWritable reports whether this process can write the runner's state folder.
func stateWritable(in *Install) bool {
	f, err := os.CreateTemp(in.Path(StateDir), ".writable-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}

// enclosing is the nearest session in flight that process pid descends from: one whose agent
// process or supervisor is among its ancestors.
func enclosing(ctx context.Context, st *store.Store, pid int) (store.Session, bool, error) {
	live, err := st.List(ctx, store.ListOptions{})
	if err != nil {
		return store.Session{}, false, err
	}
	if len(live) == 0 {
		return store.Session{}, false, nil
	}
	for _, a := range proc.Ancestors(pid) {
		for _, s := range live {
			if s.PID > 0 && (proc.Named{PID: s.PID, Start: s.PIDStart}) == a ||
				s.SupervisorPID > 0 && (proc.Named{PID: s.SupervisorPID, Start: s.SupervisorStart}) == a {
				return s, true, nil
			}
		}
	}
	return store.Session{}, false, nil
}

// sandboxed reports whether this process runs inside a session's sandbox whose pid namespace
// hides its ancestors (codex's and Claude Code's bubblewrap both make one per command): the first
// process of its pid namespace started after the supervisor of a session in flight, which the
// first process of the runner's namespace (init, or a container's) never does. s is that session.
func sandboxed(ctx context.Context, st *store.Store) (store.Session, bool) {
	first, err := proc.StartTime(1)
	if err != nil {
		return store.Session{}, false
	}
	live, err := st.List(ctx, store.ListOptions{})
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
