package substrates

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxCopy bounds one copied file, as ir bounds a profile: a behavior or resource is text a person
// wrote, and a runaway file should fail the compile rather than fill the install.
const maxCopy = 32 << 20

// Copy reads the file or folder src of the profile directory (slash-separated, relative, as ir
// validated it) into files installed under dst, verbatim. A folder is copied recursively,
// regular files only; a symlink is followed only when it stays inside the profile directory.
// A file keeps its executable bit: 0o755 when its owner may execute it, 0o644 otherwise.
func Copy(profileDir, src, dst string) ([]File, error) {
	root, err := filepath.EvalSymlinks(profileDir)
	if err != nil {
		return nil, err
	}
	c := copier{root: root}
	if err := c.copy(src, dst); err != nil {
		return nil, err
	}
	return c.files, nil
}

type copier struct {
	root  string
	files []File
	depth int
}

func (c *copier) copy(src, dst string) error {
	full, err := c.resolve(src)
	if err != nil {
		return err
	}
	fi, err := os.Stat(full)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		if c.depth++; c.depth > 64 {
			return fmt.Errorf("%s: folders nested too deep (a symlink loop?)", src)
		}
		entries, err := os.ReadDir(full)
		if err != nil {
			return err
		}
		for _, e := range entries { // ReadDir sorts by name: the output order is stable
			if err := c.copy(path.Join(src, e.Name()), path.Join(dst, e.Name())); err != nil {
				return err
			}
		}
		c.depth--
	case fi.Mode().IsRegular():
		if fi.Size() > maxCopy {
			return fmt.Errorf("%s: %d bytes is over the %d MiB limit for a copied file", src, fi.Size(), maxCopy>>20)
		}
		data, err := os.ReadFile(full)
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if fi.Mode()&0o100 != 0 {
			mode = 0o755
		}
		c.files = append(c.files, File{Path: dst, Data: data, Mode: mode})
	default:
		return fmt.Errorf("%s: not a regular file or folder", src)
	}
	return nil
}

// resolve returns the real path of src, refusing one that leads out of the profile directory.
func (c *copier) resolve(src string) (string, error) {
	real, err := filepath.EvalSymlinks(filepath.Join(c.root, filepath.FromSlash(src)))
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(c.root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s: leads out of the profile directory through a symlink", src)
	}
	return real, nil
}
