//go:build !unix

package local

import "os"

// oNoFollow is 0 where the runner does not run (see statefile.go).
const oNoFollow = 0

// oNonBlock is 0 where the runner does not run (see readResultFile).
const oNonBlock = 0

// links is 1 where the runner does not run.
func links(os.FileInfo) uint64 { return 1 }
