//go:build !unix

package local

// oNoFollow is 0 where the runner does not run (see statefile.go).
const oNoFollow = 0

// oNonBlock is 0 where the runner does not run (see readResultFile).
const oNonBlock = 0
