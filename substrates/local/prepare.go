package local

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// errCancelled is what a prelaunch stopped by a cancel returns.
var errCancelled = errors.New("cancelled")

// phase calls the test hook, when one is set, as a supervisor reaches a step of preparing a
// session ("workspace", "prelaunch", "start"): tests slow a step down to cancel during it.
func (r *Runner) phase(name, id string) {
	if r.phaseHook != nil {
		r.phaseHook(name, id)
	}
}

// cancelled reports whether the session ended (was cancelled) while its supervisor prepared it.
// A store that cannot be read does not count as a cancel: the start records the process in a
// transaction that checks again.
func (r *Runner) cancelled(ctx context.Context, id string) bool {
	s, ok, err := r.Store.Get(ctx, id)
	return err == nil && (!ok || s.Status.Ended())
}

// watchCancel polls, every watchEvery until forget is called, whether the session was cancelled
// (by any process), and closes stop when it was: what stops a prelaunch under way. The process
// has no pid recorded yet, so the cancel itself signals nothing.
func (r *Runner) watchCancel(id string) (stop <-chan struct{}, forget func()) {
	ch := make(chan struct{})
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if r.cancelled(context.Background(), id) {
					close(ch)
					return
				}
			}
		}
	}()
	return ch, func() {
		close(quit)
		<-done
	}
}

// startRecorded starts the session's process and records its pid in one write transaction that
// first checks the session is still in flight. A cancel is a write too, so either it came first
// and nothing starts (started false), or it comes after the pid is recorded and stops the
// process as it stops any running session. A session paused while it was prepared starts
// stopped. startErr is the process's failure to start; err the store's failure to record it
// (the process started and must be stopped).
func (r *Runner) startRecorded(ctx context.Context, id string, cmd *exec.Cmd, workdir string) (started bool, startErr, err error) {
	err = r.Store.Tx(ctx, func(tx *store.Tx) error {
		cur, ok, err := tx.Get(id)
		if err != nil || !ok || cur.Status.Ended() {
			return err
		}
		if startErr = cmd.Start(); startErr != nil {
			return nil
		}
		started = true
		pid := cmd.Process.Pid
		if cur.Status == ir.Paused {
			_ = proc.Pause(pid)
		}
		pstart, _ := proc.StartTime(pid)
		startedAt := r.opts.Now().UTC()
		_, _, err = tx.Modify(id, []ir.SessionStatus{ir.Running, ir.Paused}, func(m *store.Session) {
			m.PID, m.PIDStart, m.StartedAt, m.Workdir = pid, pstart, startedAt, workdir
		})
		return err
	})
	if err != nil && !started {
		// Nothing started: the store's failure is the session's.
		return false, err, nil
	}
	return started, startErr, err
}

// runBounded runs a prelaunch command to its end within the session's timeout, its output into
// the log.
func runBounded(cmd *exec.Cmd, logf *cappedLog, timeout, grace time.Duration, stop <-chan struct{}) error {
	out, drain, err := logf.pipeTo()
	if err != nil {
		return err
	}
	defer drain()
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Start()
	out.Close()
	if err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case err := <-exited:
		return err
	case <-expired:
		_ = proc.Terminate(cmd.Process.Pid, grace)
		<-exited
		return fmt.Errorf("timed out after %s", timeout)
	case <-stop:
		_ = proc.Terminate(cmd.Process.Pid, grace)
		<-exited
		return errCancelled
	}
}
