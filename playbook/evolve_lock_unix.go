//go:build unix

package playbook

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDir takes the write lock of an overlay package: an exclusive flock on its folder, released
// when the process ends however it ends, so a crashed step leaves no stale lock and no file
// behind. Held already, it is ErrBusy at once.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("locking the package %s: %v", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s): run the steps one at a time", ErrBusy, dir)
		}
		return nil, fmt.Errorf("locking the package %s: %v", dir, err)
	}
	return func() { f.Close() }, nil
}
