// Package watch notices when the files below a directory change, by polling: the name, size,
// mode and modification time of every entry, without following links. Polling needs no
// platform support and sees a change an editor makes by replacing a file as well as one made in
// place.
package watch

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"
)

// MaxEntries bounds the entries one fingerprint reads: a profile is a few dozen files.
const MaxEntries = 20000

// Fingerprint is a digest of the entries below root; it changes when any entry is added,
// removed, renamed, resized, rewritten (its modification time) or changes mode.
func Fingerprint(root string) (string, error) {
	h := sha256.New()
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n > MaxEntries {
			return fmt.Errorf("%s holds more than %d entries: watch a profile directory", root, MaxEntries)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%o\x00%d\n", p, info.Size(), info.Mode(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// Poll calls changed each time the fingerprint of root differs from the one before, checking
// every interval, until ctx is done (then it returns nil) or the fingerprint cannot be read.
// from is the fingerprint of the state the caller has already seen (taken before it read the
// files, so that a change made while it read them is not missed).
func Poll(ctx context.Context, root string, interval time.Duration, from string, changed func()) error {
	last := from
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		fp, err := Fingerprint(root)
		if err != nil {
			return err
		}
		if fp != last {
			last = fp // before changed reads the files: a change made meanwhile is seen next time
			changed()
		}
	}
}
