//go:build unix

package testbin

import (
	"errors"
	"os"
	"syscall"
)

// lock takes an exclusive flock on dir, waiting for the process that holds it (a build takes
// seconds). The kernel releases it when the process ends, however it ends.
func lock(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EINVAL) {
			return func() {}, nil // a file system without locks: each process builds (Go's cache still helps)
		}
		return nil, err
	}
	return func() { f.Close() }, nil // closing the descriptor releases the lock
}
