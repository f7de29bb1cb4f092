//go:build unix

package local

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes the flock (exclusive or shared) on the file or directory at path without
// waiting: held is false when another holder has it. Closing it (release) drops the lock.
func tryLock(path string, exclusive bool) (release func(), held bool, err error) {
	f, err := os.Open(path)
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
