//go:build linux

package substrates

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// flushStaged makes the staged files durable with one syncfs(2) of the file system that holds
// the stage: a single flush and journal commit for thousands of files. A few are synced each. A failure is the
// install's error: nothing was renamed into place yet, so the directory is left as it was.
func flushStaged(stage string, paths []string) error {
	if len(paths) <= 4 {
		return fsyncAll(paths) // a journal, a ledger: not worth flushing the whole file system
	}
	fd, err := unix.Open(stage, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", stage, err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("syncing the file system of %s: %w", stage, err)
	}
	return nil
}
