package substrates

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// disk looks at an output directory without ever following a symbolic link below it: a link
// planted at .github would otherwise let a compile write, or a check read, outside the directory.
// It remembers the directories it has looked at, since thousands of files share a few parents.
type disk struct {
	dir     string
	parents map[string]parent
}

// parent is what Lstat found at one parent directory of an output path.
type parent struct {
	missing bool
	mode    fs.FileMode
}

// entry is what is at an output path.
type entry struct {
	// blocker is the first parent of the path that is there but is not a directory (a link, a
	// file), "" when none; blockMode is its type. Nothing below a blocker is looked at.
	blocker   string
	blockMode fs.FileMode
	// exists says something is at the path itself; mode is its Lstat mode (type and permissions).
	exists bool
	mode   fs.FileMode
}

func newDisk(dir string) *disk { return &disk{dir: dir, parents: map[string]parent{}} }

func (d *disk) abs(p string) string { return filepath.Join(d.dir, filepath.FromSlash(p)) }

// lstat reports what is at p, checking each parent directory first.
func (d *disk) lstat(p string) (entry, error) {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		dirPath := p[:i]
		pa, ok := d.parents[dirPath]
		if !ok {
			fi, err := os.Lstat(d.abs(dirPath))
			switch {
			case errors.Is(err, fs.ErrNotExist):
				pa = parent{missing: true}
			case err != nil:
				return entry{}, err
			default:
				pa = parent{mode: fi.Mode()}
			}
			d.parents[dirPath] = pa
		}
		if pa.missing {
			return entry{}, nil
		}
		if !pa.mode.IsDir() {
			return entry{blocker: dirPath, blockMode: pa.mode}, nil
		}
	}
	fi, err := os.Lstat(d.abs(p))
	if errors.Is(err, fs.ErrNotExist) {
		return entry{}, nil
	}
	if err != nil {
		return entry{}, err
	}
	return entry{exists: true, mode: fi.Mode()}, nil
}

// read returns the bytes of a regular file that lstat found.
func (d *disk) read(p string) ([]byte, error) { return os.ReadFile(d.abs(p)) }

// parentDirs lists p's parent directories, outermost first: "a/b/c" gives "a", "a/b".
func parentDirs(p string) []string {
	var out []string
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}

// checkDir makes sure the output directory is there: the writer creates files in it, never it.
func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is in the message already
		}
		return fmt.Errorf("output directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("output directory %s is not a directory", dir)
	}
	return nil
}
