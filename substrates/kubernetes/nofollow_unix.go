//go:build unix

package kubernetes

import "syscall"

// oNonBlock makes an open of a FIFO return at once (see ReadInstallation).
const oNonBlock = syscall.O_NONBLOCK
