//go:build linux || darwin

package proc

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// poll is how often Terminate looks whether a group is gone yet: short enough that stopping a
// session is not noticeably slower than its processes take to exit, long enough to cost nothing.
const poll = 20 * time.Millisecond

// killWait bounds the wait after SIGKILL, which cannot be caught: a process that outlives it is
// stuck in the kernel (uninterruptible I/O), and waiting longer would only hang the caller.
const killWait = 5 * time.Second

// Signal sends sig to every process of the group pgid. A group that no longer exists is not an
// error: the caller wanted it stopped, and it is.
//
// It refuses pgid 0 and 1, which kill(2) reads as "this process's group" and "every process", and
// this process's own group, so that a wrong pid in the database cannot take the runner down.
func Signal(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("refusing to signal process group %d: it is not a session's group", pgid)
	}
	if pgid == syscall.Getpgrp() {
		return fmt.Errorf("refusing to signal process group %d: it is this process's own group", pgid)
	}
	err := syscall.Kill(-pgid, sig)
	if err == nil || errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return fmt.Errorf("cannot send %v to process group %d: %w", sig, pgid, err)
}

// Terminate stops the whole group pgid: SIGTERM, so its processes can clean up, then SIGKILL for
// whatever is still there after grace. It returns once no process of the group is left, and an
// error only when some survive SIGKILL too.
//
// A process that left the group (setsid, setpgid) escapes it: the group is the unit of control.
func Terminate(pgid int, grace time.Duration) error {
	if err := Term(pgid); err != nil {
		return err
	}
	return KillAt(pgid, time.Now().Add(grace))
}

// Term asks the whole group pgid to stop: SIGTERM, and SIGCONT so that a paused (stopped)
// process acts on it rather than keep it pending. It does not wait: KillAt finishes the job.
func Term(pgid int) error {
	if err := Signal(pgid, syscall.SIGTERM); err != nil {
		return err
	}
	return Signal(pgid, syscall.SIGCONT)
}

// KillAt waits until the group pgid has no process left or the deadline passes, then sends
// SIGKILL to whatever remains until none does. It returns an error only when some survive
// SIGKILL too.
func KillAt(pgid int, deadline time.Time) error {
	if emptied(pgid, time.Until(deadline), 0) {
		return nil
	}
	if err := Signal(pgid, syscall.SIGKILL); err != nil {
		return err
	}
	// SIGKILL again on every poll: a process forked while the first one was delivered would
	// otherwise be left running.
	if emptied(pgid, killWait, syscall.SIGKILL) {
		return nil
	}
	return fmt.Errorf("process group %d survived SIGKILL for %s: processes %v are stuck in the kernel", pgid, killWait, Members(pgid))
}

// Pause stops every process of the group pgid (SIGSTOP) until Resume.
func Pause(pgid int) error { return Signal(pgid, syscall.SIGSTOP) }

// Resume lets a paused group run again (SIGCONT).
func Resume(pgid int) error { return Signal(pgid, syscall.SIGCONT) }

// Kill ends every process of the group pgid at once (SIGKILL), with no time to clean up.
func Kill(pgid int) error { return Signal(pgid, syscall.SIGKILL) }

// emptied waits up to d for the group pgid to have no members left, sending it resend (unless 0)
// on every poll, and says whether it emptied.
func emptied(pgid int, d time.Duration, resend syscall.Signal) bool {
	deadline := time.Now().Add(d)
	for {
		if len(Members(pgid)) == 0 {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(min(poll, time.Until(deadline)))
		if resend != 0 {
			_ = Signal(pgid, resend)
		}
	}
}

// SysProcAttr is for starting a session's process: it leads a new process group, whose id is its
// pid, so that Signal and Terminate reach everything it starts and nothing else.
//
// It deliberately sets no Pdeathsig. A session must outlive a runner that dies: it is recorded
// with its (pid, start time), and whichever process looks next decides, from the database, whether
// to let it finish or stop it on its timeout. Pdeathsig would also fire when the OS thread that
// forked the child exits, which the Go runtime does at will, killing sessions at random.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// Detach is for starting a long-lived supervisor: it gets a session of its own, with no
// controlling terminal, so closing the terminal (SIGHUP) or ending the launcher leaves it running.
// A session leader also leads a new process group, so Terminate(pid) stops it as well.
func Detach() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
