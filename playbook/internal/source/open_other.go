//go:build !unix

package source

import "os"

// openNonBlocking opens path for reading (only unix has FIFOs that block an open).
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }
