//go:build !unix

package substrates

import (
	"fmt"
	"io/fs"
	"os"
)

// createStaged creates p (which must not exist) with data and exactly mode, and syncs it: here a
// file whose mode allows no writing could not be opened again to sync it later.
func createStaged(p string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return nil
}

// renameFile is os.Rename.
func renameFile(from, to string) error { return os.Rename(from, to) }

// flushStaged has nothing to do: createStaged synced every file.
func flushStaged(string, []string) error { return nil }
