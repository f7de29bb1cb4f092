package local

import (
	"context"
	"fmt"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
)

// A session's shell launches sessions with autonomy runner launch. From inside a sandbox (codex's
// and Claude Code's bubblewrap), the process that records the launch cannot start the new
// session's supervisor there: it would run in the sandbox, with the sandbox's environment, and die
// with the command. It records the session and hands it to the supervisor of the session it
// launches for, which runs outside the sandbox and starts it (handOffEvery).

// handOffEvery is how often a supervisor looks for the sessions its session's sandbox launched.
const handOffEvery = 200 * time.Millisecond

// handToSupervisor records that s waits for its launcher's supervisor to start it.
func (r *Runner) handToSupervisor(ctx context.Context, s store.Session) error {
	return r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "handed",
		Message: fmt.Sprintf("launched from inside the sandbox of %s: its supervisor starts it", r.caller.describe())})
}

// serveHandOffs starts what the session launched from its sandbox, until stop, which is never
// nil, and which starts any left once more.
func (sv *supervision) serveHandOffs(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	started := map[string]bool{}
	go func() {
		defer close(finished)
		t := time.NewTicker(handOffEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				sv.startHandedOff(ctx, started)
				return
			case <-t.C:
				sv.startHandedOff(ctx, started)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// startHandedOff starts the agent sessions launched by this session that no supervisor has.
func (sv *supervision) startHandedOff(ctx context.Context, started map[string]bool) {
	live, err := sv.r.Store.List(ctx, store.ListOptions{})
	if err != nil {
		return
	}
	origin := "session:" + sv.s.ID
	for _, s := range live {
		if s.Origin != origin || s.Kind != "agent" || s.SupervisorPID != 0 || s.PID != 0 || started[s.ID] {
			continue
		}
		started[s.ID] = true
		if err := sv.r.start(ctx, s); err != nil {
			fmt.Fprintf(sv.logf, "autonomy: cannot start %s, which this session launched: %v\n", s.ID, err)
		}
	}
}
