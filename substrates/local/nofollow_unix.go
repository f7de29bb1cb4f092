//go:build unix

package local

import "syscall"

// oNoFollow makes an open fail on a symbolic link (see statefile.go).
const oNoFollow = syscall.O_NOFOLLOW

// oNonBlock makes an open of a FIFO return at once (see readResultFile).
const oNonBlock = syscall.O_NONBLOCK
