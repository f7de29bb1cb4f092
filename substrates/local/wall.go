package local

import (
	"context"
	"fmt"
	"os"
	"slices"

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
		inside, err := enclosing(context.Background(), st, os.Getpid())
		if err != nil {
			return nil, false, err
		}
		if len(inside) == 0 {
			if s, in := sandboxed(context.Background(), st); in && opts.Session == "" {
				return nil, false, &DeniedError{Msg: fmt.Sprintf("this process runs in a pid namespace made after session %s (actor %q) started: it is inside a session's sandbox, "+
					"and %s is unset: a runner verb from inside a session never acts as the operator. Act through the session's tools (%s, %s, %s, %s)",
					s.ID, s.Actor, SessionEnv, tools.Launch, tools.ListSessions, tools.UpdateSession, tools.CancelSession)}
			} else if in {
				handOff = true
			}
		}
		if len(inside) > 0 && opts.Session == "" {
			return nil, false, &DeniedError{Msg: fmt.Sprintf("this process runs inside session %s (actor %q), and %s is unset: a runner verb from inside a session never acts as the operator. "+
				"Act through the session's tools (%s, %s, %s, %s), or keep %s=%s", inside[0].ID, inside[0].Actor, SessionEnv,
				tools.Launch, tools.ListSessions, tools.UpdateSession, tools.CancelSession, SessionEnv, inside[0].ID)}
		}
		if len(inside) > 0 && !insideOf(inside, opts.Session) {
			return nil, false, &DeniedError{Msg: fmt.Sprintf("%s=%s, but this process runs inside session %s (actor %q): a session acts only as itself", SessionEnv, opts.Session, inside[0].ID, inside[0].Actor)}
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
