package local

import (
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
)

// errCancelled is what a prelaunch stopped by a cancel returns.
var errCancelled = errors.New("cancelled")

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
