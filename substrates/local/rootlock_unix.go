//go:build unix

package local

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes the flock (exclusive or shared) on the file at path without waiting: held is false when
// another holder has it. Closing the file (release) drops it.
func tryLock(path string, exclusive bool) (release func(), held bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
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
	if err == nil {
		return func() { _ = f.Close() }, true, nil
	}
	f.Close()
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, false, nil
	}
	return nil, false, err
}
