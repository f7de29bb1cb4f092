//go:build unix

package source

import (
	"os"
	"syscall"
)

// openNonBlocking opens path for reading; O_NONBLOCK makes the open of a FIFO return at once
// instead of waiting for a writer (a regular file reads the same either way).
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// openWriteNonBlocking opens path for writing with flag; O_NONBLOCK makes the open of a FIFO
// return at once (ENXIO when it has no reader) instead of waiting for a reader.
func openWriteNonBlocking(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NONBLOCK, perm)
}
