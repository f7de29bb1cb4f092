package local

import (
	"context"
	"fmt"
	"os"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
)

// mayTakeOver checks that this process, started as `autonomy runner supervise`, may supervise
// session s: it is the supervisor the runner started (or a runner's, for a session whose
// supervisor died), never a process of a session in flight (which would run another session's
// agent with its own environment, or stop it), and never a second supervisor of a session whose
// recorded one is alive.
func (r *Runner) mayTakeOver(ctx context.Context, s store.Session) error {
	if _, err := proc.PidNS(); err != nil {
		return &DeniedError{Msg: fmt.Sprintf("runner supervise %s: %v", s.ID, err)}
	}
	live, err := r.Store.List(ctx, store.ListOptions{})
	if err != nil {
		return err
	}
	for _, a := range proc.Ancestors(os.Getpid()) {
		for _, l := range live {
			if l.PID > 0 && (proc.Named{PID: l.PID, Start: l.PIDStart}) == a {
				return &DeniedError{Msg: fmt.Sprintf("runner supervise %s: this process runs inside session %s (actor %q): only the runner starts a supervisor", s.ID, l.ID, l.Actor)}
			}
		}
	}
	if o, why, blind := outOfSightOf(live, r.In); blind {
		return &DeniedError{Msg: fmt.Sprintf("runner supervise %s: %s while session %s is in flight: only the runner starts a supervisor", s.ID, why, o.ID)}
	}
	pid := s.SupervisorPID
	if pid > 0 && pid != os.Getpid() && pid != os.Getppid() && proc.Alive(pid, s.SupervisorStart) {
		return &DeniedError{Msg: fmt.Sprintf("runner supervise %s: its supervisor (pid %d) is alive: a session has one supervisor", s.ID, pid)}
	}
	return nil
}
