//go:build unix

package substrates

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"syscall"
)

// createStaged creates p (which must not exist) with data and exactly mode, whatever the umask,
// without syncing it. It goes to the system directly: os.OpenFile would also try to register the
// file with the poller and toggle its non-blocking flag, four fcntl calls a file that thousands
// of files add up.
func createStaged(p string, data []byte, mode fs.FileMode) error {
	fd, err := retryEINTR(func() (int, error) {
		return syscall.Open(p, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o600)
	})
	if err != nil {
		return &os.PathError{Op: "open", Path: p, Err: err}
	}
	for len(data) > 0 && err == nil {
		var n int
		n, err = retryEINTR(func() (int, error) { return syscall.Write(fd, data) })
		if err == nil && n == 0 {
			err = syscall.EIO // a regular file that takes nothing: never loop on it
		}
		data = data[n:]
	}
	if err == nil {
		_, err = retryEINTR(func() (int, error) { return 0, syscall.Fchmod(fd, uint32(mode.Perm())) })
	}
	if cerr := syscall.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &os.PathError{Op: "write", Path: p, Err: err}
	}
	return nil
}

// retryEINTR calls f until it is not interrupted by a signal.
func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if !errors.Is(err, syscall.EINTR) {
			return n, err
		}
	}
}

// renameFile is rename(2). os.Rename first looks at the destination to refuse replacing a
// directory, a stat per file; the system refuses that itself (EISDIR), and planning made sure
// nothing but a regular file is ever replaced.
func renameFile(from, to string) error {
	if err := syscall.Rename(from, to); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// fsyncAll syncs every file in paths, a few at a time, and returns the first error. Files synced
// in parallel share the file system's journal commits, where a loop would wait for one commit per
// file.
func fsyncAll(paths []string) error {
	workers := min(len(paths), 32)
	next := make(chan string)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var first error
			for p := range next {
				if err := fsyncFile(p); err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		}()
	}
	for _, p := range paths {
		next <- p
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// fsyncFile syncs one file. It opens it read-only: a staged file may have a mode that allows no
// writing, and fsync needs none.
func fsyncFile(p string) error {
	fd, err := retryEINTR(func() (int, error) { return syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0) })
	if err == nil {
		_, err = retryEINTR(func() (int, error) { return 0, syscall.Fsync(fd) })
		if cerr := syscall.Close(fd); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return &os.PathError{Op: "fsync", Path: p, Err: err}
	}
	return nil
}
