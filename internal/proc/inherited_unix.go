//go:build unix

package proc

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// SealInherited marks every descriptor of this process above standard error close-on-exec, so
// that none it inherited reaches a process it starts: only standard input, output and error,
// and what it passes explicitly (exec.Cmd.ExtraFiles), do. A shell that launches with a file or
// a pipe open (7>file) would otherwise hand it on to the supervisor and from it to every
// session's agent. The descriptors stay open in this process (a supervisor still reads the
// environment its launcher writes to descriptor 3). Go opens its own descriptors close-on-exec
// already.
func SealInherited() error {
	if err := sealRange(); err == nil {
		return nil
	}
	return sealListed()
}

// sealListed marks each open descriptor above standard error close-on-exec, from the list of
// them (where there is no close_range: Linux before 5.11, other systems).
func sealListed() error {
	dir := "/proc/self/fd"
	if _, err := os.Stat(dir); err != nil {
		dir = "/dev/fd"
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || fd <= 2 {
			continue
		}
		unix.CloseOnExec(fd) // the list's own descriptor is closed by now: EBADF, ignored
	}
	return nil
}
