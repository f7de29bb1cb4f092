package substrates

import (
	"errors"
	"fmt"
	"time"
)

// DefaultLockWait is how long Write waits for another process installing into the same
// directory before it gives up.
const DefaultLockWait = 30 * time.Second

// LockedError is Write's error when another process held the output directory's lock for the
// whole wait.
type LockedError struct {
	Dir    string
	Waited time.Duration
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("another autonomy process holds %s: another compile installing into it, or an agent session working in the installation root (runner list shows it; it holds the installation until it ends); waited %s: run again when it has finished", e.Dir, e.Waited)
}

// errBusy is what tryLock returns when another process holds the lock.
var errBusy = errors.New("locked by another process")

// lockDir takes the output directory's lock: exclusive to install, shared to only plan (a dry
// run). Two compiles into one directory, even a new one, are serialized: the second waits up
// to wait (calling waiting once when it starts to), then plans against what the first installed.
func lockDir(dir string, exclusive bool, wait time.Duration, waiting func()) (unlock func(), err error) {
	if wait <= 0 {
		wait = DefaultLockWait
	}
	start := time.Now()
	told := false
	for {
		unlock, err := tryLock(dir, exclusive)
		if !errors.Is(err, errBusy) {
			return unlock, err
		}
		if !told && waiting != nil {
			waiting()
			told = true
		}
		if time.Since(start) >= wait {
			return nil, &LockedError{Dir: dir, Waited: wait}
		}
		time.Sleep(50 * time.Millisecond)
	}
}
