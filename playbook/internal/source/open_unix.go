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
