//go:build unix

package local

import (
	"os"
	"syscall"
)

// oNoFollow makes an open fail on a symbolic link (see statefile.go).
const oNoFollow = syscall.O_NOFOLLOW

// oNonBlock makes an open of a FIFO return at once (see readResultFile).
const oNonBlock = syscall.O_NONBLOCK

// links is how many hard links fi's file has (1 when unknown).
func links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
