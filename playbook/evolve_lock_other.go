//go:build !unix

package playbook

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// lockDir takes the write lock of an overlay package: the file .evolve.lock in it, created
// exclusively and removed when the step ends. Held already, it is ErrBusy at once (a crashed
// step leaves it: remove it by hand).
func lockDir(dir string) (unlock func(), err error) {
	file := filepath.Join(dir, ".evolve.lock")
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%w (it holds %s; remove it if no step is running): run the steps one at a time", ErrBusy, file)
	}
	if err != nil {
		return nil, fmt.Errorf("locking the package %s: %v", dir, err)
	}
	f.Close()
	return func() { os.Remove(file) }, nil
}
