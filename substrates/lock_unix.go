//go:build unix

package substrates

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes a flock on the output directory itself, so no lock file is ever left in it. The
// kernel releases it when the process ends, however it ends.
func tryLock(dir string, exclusive bool) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		switch {
		case errors.Is(err, syscall.EWOULDBLOCK):
			return nil, errBusy
		case errors.Is(err, syscall.ENOLCK), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.EINVAL):
			// A file system without locks (some network mounts): install unlocked, as before.
			return func() {}, nil
		}
		return nil, err
	}
	return func() { f.Close() }, nil // closing the descriptor releases the lock
}
