//go:build !unix

package source

import "os"

// openNonBlocking opens path for reading (only unix has FIFOs that block an open).
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }

// openWriteNonBlocking opens path for writing with flag.
func openWriteNonBlocking(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}
