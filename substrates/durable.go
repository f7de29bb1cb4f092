package substrates

import (
	"fmt"
	"os"
	"sync"
)

// The install writes its staged files without syncing them one by one, then makes them all
// durable at once (flushStaged) before the journal that vouches for them, and before the renames
// that expose them: one flush instead of a sync per file, and the same guarantee, since no
// staged file is renamed into place before the flush returned.

// syncStaged makes paths, files staged in stage, durable: a few are synced each, many at once
// (flushStaged). A variable so that tests can watch the order of syncs and renames.
var syncStaged = func(stage string, paths []string) error {
	if len(paths) <= 4 {
		return fsyncAll(paths)
	}
	return flushStaged(stage, paths)
}

// fsyncAll syncs every file in paths, a few at a time, and returns the first error. Files synced
// in parallel share the file system's journal commits, where a loop would wait for one commit per
// file.
func fsyncAll(paths []string) error {
	workers := min(len(paths), 32)
	next := make(chan string)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var first error
			for p := range next {
				if err := fsyncFile(p); err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		}()
	}
	for _, p := range paths {
		next <- p
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// fsyncFile syncs one file. It opens it for writing, which some systems require to flush it.
func fsyncFile(p string) error {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("syncing %s: %w", p, err)
	}
	return nil
}
