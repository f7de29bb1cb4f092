//go:build unix

package local

import "syscall"

// oNoFollow makes an open fail on a symbolic link (see statefile.go).
const oNoFollow = syscall.O_NOFOLLOW
