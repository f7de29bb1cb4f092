//go:build !linux && !darwin

package proc

import (
	"fmt"
	"runtime"
	"syscall"
	"time"
)

// errUnsupported is what every operation returns where process groups do not exist.
var errUnsupported = fmt.Errorf("process groups are not supported on %s: the local runner needs a Unix-like OS (Linux or macOS)", runtime.GOOS)

// StartTime is not available off Unix.
func StartTime(pid int) (uint64, error) { return 0, errUnsupported }

// Parent is not available off Unix.
func Parent(pid int) (int, error) { return 0, errUnsupported }

// Alive is always false off Unix: nothing was started.
func Alive(pid int, start uint64) bool { return false }

// Members is always empty off Unix.
func Members(pgid int) []int { return nil }

// Signal is not available off Unix.
func Signal(pgid int, sig syscall.Signal) error { return errUnsupported }

// Pause is not available off Unix.
func Pause(pgid int) error { return errUnsupported }

// Resume is not available off Unix.
func Resume(pgid int) error { return errUnsupported }

// Kill is not available off Unix.
func Kill(pgid int) error { return errUnsupported }

// Terminate is not available off Unix.
func Terminate(pgid int, grace time.Duration) error { return errUnsupported }

// Term is not available off Unix.
func Term(pgid int) error { return errUnsupported }

// KillAt is not available off Unix.
func KillAt(pgid int, deadline time.Time) error { return errUnsupported }

// SysProcAttr is nil off Unix; nothing is started with it, since the runner refuses to run.
func SysProcAttr() *syscall.SysProcAttr { return nil }

// Detach is nil off Unix, as SysProcAttr.
func Detach() *syscall.SysProcAttr { return nil }
